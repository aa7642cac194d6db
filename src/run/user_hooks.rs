//! The run's hooks (Claude Code's protocol, `crate::hooks`), assembled: the job's own,
//! then — in trusted mode, when the job says `repo_hooks: true` — the repository's
//! `.claude/` and `.continue/` settings files (`crate::hooks::settings`). An untrusted
//! run never runs a hook the repository defines: the files are not even read. Hooks run where Bash runs: the workspace, the run's sandbox
//! and environment, stopped with the run.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::RunConfig;
use crate::hooks::config::{HookOrigin, flatten};
use crate::hooks::input::Common;
use crate::hooks::run::Place;
use crate::hooks::{Approval, Hooks};
use crate::permissions::Mode;
use crate::tools::ToolShared;

/// The repository's settings files whose hooks a job may opt in to, as messages name them.
pub(crate) const REPO_SETTINGS: &str = ".claude/ and .continue/ settings files";

/// The run's hooks; problems reading the repository's file are warnings (its hooks then
/// do not run), a malformed matcher too.
pub(crate) fn build(
    config: &RunConfig,
    shared: &ToolShared,
    (run_id, out_dir, mode, resumed): (&str, &Path, Mode, bool),
    approvals: BTreeMap<String, Approval>,
    warnings: &mut Vec<String>,
) -> Hooks {
    let job = config.job();
    let mut defs = flatten(&job.hooks, HookOrigin::Job);
    if job.repo_hooks && config.trust().untrusted {
        warnings.push(format!(
            "repo_hooks: the repository's hooks ({REPO_SETTINGS}) do not run in untrusted mode"
        ));
    } else if job.repo_hooks {
        // A resume runs the hooks its first run read, never what the model wrote since.
        let kept = resumed
            .then(|| super::resume_trust::kept_repo_files(out_dir))
            .flatten();
        let (found, notes) = match kept {
            Some(files) => crate::hooks::settings::kept_repository_hooks(&files),
            None => crate::hooks::settings::repository_hooks(&shared.workspace),
        };
        warnings.extend(notes);
        defs.extend(found);
    }
    let common = Common {
        session_id: run_id.to_owned(),
        transcript_path: out_dir.join(crate::session::SESSION_FILE),
        cwd: shared.workspace.clone(),
        mode,
    };
    let place = Place {
        workspace: shared.workspace.clone(),
        env: shared.env.clone(),
        sandbox: shared.sandbox_handle(),
        cancel: shared.cancel.clone(),
    };
    match Hooks::new(defs, common, place) {
        Ok(h) => h.with_approvals(approvals),
        Err(e) => {
            warnings.push(format!("hooks not run: {e}"));
            Hooks::default().with_approvals(approvals)
        }
    }
}

fn repo_hooks(workspace: &Path, warnings: &mut Vec<String>) -> Vec<crate::hooks::HookDef> {
    let (defs, notes) = crate::hooks::settings::repository_hooks(workspace);
    warnings.extend(notes);
    defs
}

/// People's answers to deferred calls from the command line (`--approve`, `--deny`,
/// `--reason`), each naming a call the run left waiting (a call of its last response
/// without a result); a call named by both is denied.
pub(crate) fn approvals(
    answers: &crate::config::Answers,
    history: &[crate::conversation::Message],
) -> Result<BTreeMap<String, Approval>, String> {
    let budget = crate::agent::Budget::new(crate::job::Limits::default());
    let waiting = crate::agent::RunState::new(history.to_vec(), budget).unanswered_calls();
    let mut out = BTreeMap::new();
    let approvals = answers.approve.iter().map(|id| (id, Approval::Approve));
    let denials = answers
        .deny
        .iter()
        .map(|id| (id, Approval::Deny(answers.reason.clone())));
    for (id, answer) in approvals.chain(denials) {
        if !waiting.iter().any(|c| c.id == *id) {
            let ids: Vec<&str> = waiting.iter().map(|c| c.id.as_str()).collect();
            return Err(format!(
                "no call `{id}` waits for approval in this run (waiting: {})",
                if ids.is_empty() {
                    "none".to_owned()
                } else {
                    ids.join(", ")
                }
            ));
        }
        out.insert(id.clone(), answer);
    }
    Ok(out)
}

/// The hooks a run of `config` would run, for `cn-run explain`: each with its event,
/// matcher, command, timeout and origin; and why the repository's would not run.
pub(crate) fn explained(config: &RunConfig) -> (Vec<serde_json::Value>, Option<String>) {
    let job = config.job();
    let mut defs = flatten(&job.hooks, HookOrigin::Job);
    let note = match (job.repo_hooks, config.trust().untrusted) {
        (true, true) => Some(format!(
            "the repository's hooks ({REPO_SETTINGS}) do not run: untrusted mode"
        )),
        (true, false) => {
            let mut warnings = Vec::new();
            defs.extend(repo_hooks(config.workspace(), &mut warnings));
            (!warnings.is_empty()).then(|| warnings.join("; "))
        }
        (false, _) => None,
    };
    let rows = defs
        .iter()
        .map(|d| {
            serde_json::json!({
                "event": d.event.as_str(),
                "matcher": d.matcher.clone().unwrap_or_default(),
                "command": d.command.command,
                "timeout_s": d.command.timeout().as_secs(),
                "origin": d.origin,
            })
        })
        .collect();
    (rows, note)
}

/// The hooks part of `cn-run explain` for a reader.
pub(crate) fn explained_text(config: &RunConfig) -> String {
    let (rows, note) = explained(config);
    if rows.is_empty() && note.is_none() {
        return String::new();
    }
    let mut text = String::from("hooks (Claude Code's protocol; never wider than the policy):\n");
    for r in &rows {
        text.push_str(&format!(
            "  {:<16} {:<12} {} ({} s, {})\n",
            r["event"].as_str().unwrap_or_default(),
            r["matcher"]
                .as_str()
                .filter(|m| !m.is_empty())
                .unwrap_or("*"),
            r["command"].as_str().unwrap_or_default(),
            r["timeout_s"],
            r["origin"].as_str().unwrap_or_default(),
        ));
    }
    if let Some(note) = note {
        text.push_str(&format!("  ({note})\n"));
    }
    text
}
