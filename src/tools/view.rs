//! The one view of cn-run's file tools: what Read, Write, Edit, MultiEdit, List, Search and
//! UploadArtifact may touch on the model's behalf, judged once when the call is checked and
//! again, on what is really opened, when it runs.
//!
//! The tools run in cn-run's own process, outside the sandbox, so they must not see more
//! than a contained command does: the credential locations the sandbox hides (one list,
//! `sandbox::hidden`) and the process files under `/proc` and `/sys` (cn-run's own
//! environment is `/proc/self/environ`) are refused whatever the rules say; the run's own
//! records are never written; a path outside the workspace, inside `.git`, or that looks
//! like a credential file needs a rule that names it. A path is judged by its real form
//! (symlinks resolved) and used through descriptors opened without following any symlink
//! (`crate::nofollow`), so a folder swapped for a symlink after the check fails the call
//! instead of redirecting it.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::grant::{Grant, Judged, Pin};
use super::paths::{is_sensitive_path, resolve_in_workspace};
use super::{ToolError, ToolShared};
use crate::catalog::{Changes, ToolInfo};
use crate::nofollow;
use crate::permissions::{
    GIT_INTERNALS_RULE, OUTSIDE_WRITE_RULE, Permission, Tighten, UNSEEN_RULE,
};

/// What a tool does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// The places the file tools keep away from besides the workspace's edge.
#[derive(Debug, Clone, Default)]
pub(crate) struct View {
    /// Credential locations (real paths), the sandbox's list minus what the job gives back.
    hidden: Vec<PathBuf>,
    /// The run's own folder (and the `.cn-run` folder holding it): never written.
    records: Vec<PathBuf>,
    /// The repository's git directory as found at the start, when it is not a `.git`.
    git_dir: Option<PathBuf>,
}

impl View {
    /// The view for a run in `workspace` whose commands have `home`.
    pub(crate) fn new(workspace: &Path, home: Option<&Path>) -> View {
        let mut hidden: Vec<PathBuf> = crate::sandbox::hidden::locations(home)
            .iter()
            .map(|p| resolve_in_workspace(workspace, &p.to_string_lossy()).real)
            .filter(|p| !p.starts_with(workspace))
            .collect();
        hidden.dedup();
        View {
            hidden,
            records: Vec::new(),
            git_dir: git_dir_of(workspace),
        }
    }

    /// Gives back the credential locations the job lists (`tools.bash.readable`).
    pub(crate) fn give_back(&mut self, readable: &[PathBuf]) {
        self.hidden.retain(|h| {
            !readable
                .iter()
                .any(|r| h.starts_with(r) || r.starts_with(h))
        });
    }

    /// Never write into `run_dir` (nor the `.cn-run` folder around it, nor the workspace's
    /// `.cn-run`, whose run folders `--resume latest` picks from).
    pub(crate) fn protect_records(&mut self, workspace: &Path, run_dir: &Path) {
        let dir = resolve_in_workspace(workspace, &run_dir.to_string_lossy()).real;
        if let Some(parent) = dir.parent().filter(|p| p.ends_with(".cn-run")) {
            self.records.push(parent.to_path_buf());
        }
        self.records.push(dir);
        self.records
            .push(resolve_in_workspace(workspace, ".cn-run").real);
    }
}

/// The repository's git directory when it is elsewhere than `<workspace>/.git` (a
/// `gitdir:` file): cn-run's own record of it, taken at the start.
fn git_dir_of(workspace: &Path) -> Option<PathBuf> {
    let repo = git2::Repository::open(workspace).ok()?;
    let dir = repo.path().canonicalize().ok()?;
    (!dir.ends_with(".git")).then_some(dir)
}

/// The objection to `access` of the real path `real`, if any.
pub(crate) fn judge(
    shared: &ToolShared,
    raw: &str,
    real: &Path,
    access: Access,
) -> Option<Tighten> {
    let ws = &shared.workspace;
    let view = shared.view();
    let exclude = |rule, reason: String| {
        Some(Tighten {
            permission: Permission::Exclude,
            rule,
            reason,
        })
    };
    let ask = |rule, reason: String| {
        Some(Tighten {
            permission: Permission::Ask,
            rule,
            reason,
        })
    };
    if real.starts_with("/proc") || real.starts_with("/sys") {
        return exclude(
            "tool.process_files",
            format!(
                "{raw} resolves to {}, a process or kernel file (it would show cn-run's own \
                 environment and memory); cn-run's file tools never open /proc or /sys",
                real.display()
            ),
        );
    }
    if view.hidden.iter().any(|h| real.starts_with(h)) {
        return exclude(
            "tool.hidden_credentials",
            format!(
                "{raw} resolves to {}, a credential location hidden from the run (as from its \
                 commands); a job gives one back with tools.bash.readable",
                real.display()
            ),
        );
    }
    // Inside the workspace only the mode bits count (it may itself lie under `/tmp`), for
    // Edit and Write too: Edit reads what it changes.
    let unseen = if real.starts_with(ws) {
        super::unseen::closed_to_capless_root(real, ws)
    } else {
        (access == Access::Read)
            .then(|| super::unseen::unseen_by_commands(real))
            .flatten()
    };
    if let Some(why) = unseen {
        return ask(
            UNSEEN_RULE,
            format!(
                "{raw} resolves to {}, {why}; only a rule that names the path allows it (not \
                 auto mode, not on_ask: allow)",
                real.display()
            ),
        );
    }
    let own_copy = |d: &PathBuf| ws.starts_with(d) && real.starts_with(ws);
    let records = view
        .records
        .iter()
        .any(|d| real.starts_with(d) && !own_copy(d));
    if access == Access::Write && records {
        return exclude(
            "tool.run_records",
            format!("{raw} lies in the run's own records, which only cn-run writes"),
        );
    }
    if !real.starts_with(ws) && access == Access::Write {
        return ask(
            OUTSIDE_WRITE_RULE,
            format!(
                "{raw} resolves to {} outside the workspace, where a contained command cannot \
                 write either; only a rule that names the path allows it (not auto mode, not \
                 on_ask: allow)",
                real.display()
            ),
        );
    }
    if !real.starts_with(ws) {
        return ask(
            "tool.outside_workspace",
            format!("{raw} resolves to {} outside the workspace", real.display()),
        );
    }
    let in_git = real
        .strip_prefix(ws)
        .is_ok_and(|rest| rest.components().any(|c| c.as_os_str() == ".git"))
        || view.git_dir.as_ref().is_some_and(|g| real.starts_with(g));
    if in_git {
        return ask(
            GIT_INTERNALS_RULE,
            format!(
                "{raw} lies inside .git, whose config and hooks run programs; only a rule that \
                 names .git allows it"
            ),
        );
    }
    is_sensitive_path(real).then(|| Tighten {
        permission: Permission::Ask,
        rule: "tool.sensitive_file",
        reason: format!("{raw} looks like a credential file"),
    })
}

/// The judgement of the path the catalogue's rule argument names (its default when the
/// call leaves it out or blank; none when there is no default: the call then fails on
/// its own when it runs): a write for a tool that changes the file it names, else a
/// read. A tool whose rule argument is no path is not judged here.
pub(crate) fn judge_rule_path(info: &ToolInfo, args: &Value, shared: &ToolShared) -> Judged {
    let Some(arg) = info.rule_arg.filter(|a| a.kind.is_path()) else {
        return Judged::default();
    };
    let given = args.get(arg.name).and_then(Value::as_str);
    let raw = match arg.default {
        Some(default) => Some(given.filter(|p| !p.trim().is_empty()).unwrap_or(default)),
        None => given,
    };
    let access = match info.changes {
        Changes::NamedFile => Access::Write,
        Changes::Nothing | Changes::Anything => Access::Read,
    };
    raw.map_or_else(Judged::default, |raw| judge_arg(shared, raw, access))
}

/// The judgement of the path argument `raw` when the call is checked.
pub(crate) fn judge_arg(shared: &ToolShared, raw: &str, access: Access) -> Judged {
    let real = resolve_in_workspace(&shared.workspace, raw).real;
    Judged {
        tighten: judge(shared, raw, &real, access),
        pin: Pin::Path(real),
    }
}

/// Whether the call may use `real` now: no objection, or one its decision lifted for
/// exactly this path.
pub(crate) fn check_use(
    shared: &ToolShared,
    grant: &Grant,
    raw: &str,
    real: &Path,
    access: Access,
) -> Result<(), ToolError> {
    match judge(shared, raw, real, access) {
        None => Ok(()),
        Some(t) if t.permission == Permission::Ask && grant.lifts_path(t.rule, real) => Ok(()),
        Some(t) if t.permission == Permission::Ask => Err(ToolError::RespondToModel(format!(
            "Refused: {} (rule {}); no rule allowed this path when the call was checked, or it \
             changed since",
            t.reason, t.rule
        ))),
        Some(t) => Err(ToolError::RespondToModel(format!(
            "Refused: {} (rule {})",
            t.reason, t.rule
        ))),
    }
}

/// A path ready to use: its folder open (no symlink followed on the way), its name in it,
/// and where it really is.
pub(crate) struct Located {
    pub dir: OwnedFd,
    pub name: OsString,
    pub real: PathBuf,
}

/// Resolves `raw` now, checks it, and opens its folder without following any symlink
/// (making missing folders when `create`). The check is made again on where the folder
/// really is once open.
pub(crate) fn locate(
    shared: &ToolShared,
    grant: &Grant,
    raw: &str,
    access: Access,
    create: bool,
) -> Result<Located, ToolError> {
    let real = resolve_in_workspace(&shared.workspace, raw).real;
    check_use(shared, grant, raw, &real, access)?;
    let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else {
        return Err(ToolError::RespondToModel(format!("{raw} names no file")));
    };
    let dir = nofollow::open_dir_abs(parent, create)
        .map_err(|e| ToolError::RespondToModel(format!("Cannot open {raw}: {e}")))?;
    let real = match nofollow::path_of(&dir) {
        Ok(opened) if opened != parent => {
            let moved = opened.join(name);
            check_use(shared, grant, raw, &moved, access)?;
            moved
        }
        _ => real.clone(),
    };
    Ok(Located {
        dir,
        name: name.to_os_string(),
        real,
    })
}

/// The path to show the model: workspace-relative inside it, else absolute.
pub(crate) fn shown(shared: &ToolShared, real: &Path) -> String {
    real.strip_prefix(&shared.workspace)
        .map_or_else(|_| real.display().to_string(), |p| p.display().to_string())
}
