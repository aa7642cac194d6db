//! The run's git checkpoints as the composition root uses them: the checkpointer of
//! `checkpoint::run` given the job's `git:` settings, its notices made events, the file
//! a Write or Edit call names, and diff.patch written into the run folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::checkpoint::{Notice, Notify, Settings};
use crate::events::{Emitter, Event};
use crate::redact::Redactor;
use crate::report::DiffStat;

/// A new run's checkpointer, opened before the run exists (see `checkpoint::Early`).
pub(crate) struct Early(crate::checkpoint::Early);

impl Early {
    /// Starts on `workspace` (a canonical path).
    pub(crate) fn open(workspace: &Path) -> Early {
        let status = crate::checkpoint::StatusOf {
            options: crate::agent::status_options,
            lines: crate::agent::status_lines,
            unavailable: crate::agent::STATUS_UNAVAILABLE,
        };
        Early(crate::checkpoint::Early::open(workspace, status))
    }

    /// The workspace it was opened on.
    pub(crate) fn workspace(&self) -> &Path {
        self.0.workspace()
    }

    /// The checkpointer of run `run_id`, and the git status when it comes.
    pub(crate) fn bind(
        self,
        run_id: &str,
        out_dir: &Path,
        settings: &crate::job::GitSettings,
        emitter: &Arc<Emitter>,
    ) -> (Checkpoints, tokio::sync::oneshot::Receiver<String>) {
        let notify = notify(emitter);
        let (inner, status) = self.0.bind(run_id, out_dir, settings_of(settings), notify);
        let checkpoints = Checkpoints {
            inner,
            emitter: emitter.clone(),
        };
        (checkpoints, status)
    }
}

/// The run's checkpointer; what is not here is `checkpoint::Checkpoints`'s own.
pub(crate) struct Checkpoints {
    inner: crate::checkpoint::Checkpoints,
    emitter: Arc<Emitter>,
}

impl std::ops::Deref for Checkpoints {
    type Target = crate::checkpoint::Checkpoints;
    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

impl Checkpoints {
    /// Continues a resumed run's snapshot chain (see `checkpoint::Checkpoints::resume`).
    pub(crate) fn resume(
        workspace: &Path,
        run_id: &str,
        out_dir: &Path,
        settings: &crate::job::GitSettings,
        emitter: &Arc<Emitter>,
    ) -> Checkpoints {
        let (settings, notify) = (settings_of(settings), notify(emitter));
        let inner =
            crate::checkpoint::Checkpoints::resume(workspace, run_id, out_dir, settings, notify);
        Checkpoints {
            inner,
            emitter: emitter.clone(),
        }
    }

    /// Hands the checkpoint after a mutating call to the worker: a tool that changes only
    /// the file it names (Write, Edit, MultiEdit) names that file; any other tool's
    /// checkpoint scans.
    pub(crate) fn after_call(
        &self,
        turn: u32,
        call_id: &str,
        tool: &str,
        args: &serde_json::Value,
    ) {
        let info = crate::catalog::find(tool);
        if info.is_none_or(|t| t.leaves_running(args)) {
            // A background command, or a tool the catalogue does not describe (an MCP
            // server's): what it changes may change again after the call.
            self.inner.note_lasting_change();
        }
        let touched = touched_file(self.inner.workspace(), tool, args).map(|p| vec![p]);
        let label = format!("{tool} {call_id}");
        self.inner.after_call(turn, call_id, label, touched);
    }

    /// Captures the files `calls` (tool, arguments) are about to write, for the start
    /// snapshot still being taken: true when the calls need not wait for it. False when a
    /// call is not one that changes only the file it names, or the start snapshot is taken.
    pub(crate) fn capture_before(&self, calls: &[(String, serde_json::Value)]) -> bool {
        let named: Option<Vec<PathBuf>> = calls
            .iter()
            .map(|(tool, args)| {
                let lasting = crate::catalog::find(tool).is_none_or(|t| t.leaves_running(args));
                (!lasting).then(|| touched_file(self.inner.workspace(), tool, args))?
            })
            .collect();
        named.is_some_and(|paths| self.inner.capture_before(&paths))
    }

    /// Every snapshot so far (start first), for result.json and the session.
    pub(crate) fn list(&self) -> Vec<serde_json::Value> {
        let list = self.inner.list();
        list.iter()
            .filter_map(|c| serde_json::to_value(c).ok())
            .collect()
    }

    /// Writes diff.patch (exact bytes); its stats, and whether it holds a secret. A patch
    /// that cannot be written is a failure of the run's files (`files`).
    pub(crate) fn write_diff(
        &self,
        out_dir: &Path,
        redactor: &Redactor,
        files: &super::run_files::RunFiles,
    ) -> Option<WrittenDiff> {
        let warn = |message: String| self.emitter.emit(Event::Warning { message });
        let (patch, stat) = match self.inner.diff()? {
            Ok(diff) => diff,
            Err(e) => {
                warn(format!("cannot compute the run's diff: {e}"));
                return None;
            }
        };
        let path = out_dir.join("diff.patch");
        if !files.write_whole("diff.patch", &[&patch]) {
            return None;
        }
        let secret = redactor.finds_secret(&String::from_utf8_lossy(&patch));
        if secret {
            warn(
                "diff.patch contains the value of a secret (kept exact; review it before sharing)"
                    .to_owned(),
            );
        }
        let files = crate::report::github::patch_files::parse(&patch);
        Some(WrittenDiff {
            path,
            stat,
            secret,
            files,
        })
    }
}

/// diff.patch as written: where, its totals, whether it holds a secret, and its files.
pub(crate) struct WrittenDiff {
    pub path: PathBuf,
    pub stat: DiffStat,
    pub secret: bool,
    pub files: Vec<crate::report::github::patch_files::FileChange>,
}

/// The checkpointer's notices as events.
fn notify(emitter: &Arc<Emitter>) -> Notify {
    let emitter = emitter.clone();
    Arc::new(move |notice| {
        emitter.emit(match notice {
            Notice::Created {
                turn,
                call_id,
                checkpoint,
            } => Event::CheckpointCreated {
                turn,
                index: checkpoint.index,
                reference: checkpoint.reference,
                commit: checkpoint.commit,
                call_id,
                label: checkpoint.label,
                files_changed: checkpoint.files_changed,
                skipped: checkpoint.skipped,
            },
            Notice::Warning(message) => Event::Warning { message },
        })
    })
}

/// The job's `git:` settings the checkpointer uses.
fn settings_of(git: &crate::job::GitSettings) -> Settings {
    Settings {
        limits: crate::checkpoint::Limits {
            max_file_bytes: git.max_file_bytes,
            max_dir_files: git.max_dir_files,
        },
        binary_patch: git.binary_patch,
        keep: git.keep.map(|k| k as usize),
    }
}

/// The one file a call changed (as the tool resolves it, symlinks followed), for a tool
/// that changes only the file it names; `None` for any other tool, or arguments without a
/// path.
pub(crate) fn touched_file(
    workspace: &Path,
    tool: &str,
    args: &serde_json::Value,
) -> Option<PathBuf> {
    let raw = crate::catalog::find(tool)?.changed_file(args)?;
    Some(crate::tools::resolve_in_workspace(workspace, raw).real)
}
