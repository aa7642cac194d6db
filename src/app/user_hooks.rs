//! The run's hooks (Claude Code's protocol, `crate::hooks`), assembled: the job's own,
//! then — in trusted mode, when the job says `repo_hooks: true` — the repository's
//! `.claude/settings.json`. An untrusted run never runs a hook the repository defines:
//! the file is not even read. Hooks run where Bash runs: the workspace, the run's sandbox
//! and environment, stopped with the run.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::RunConfig;
use crate::hooks::config::{HookOrigin, flatten, read_settings};
use crate::hooks::input::Common;
use crate::hooks::run::Place;
use crate::hooks::{Approval, Hooks};
use crate::permissions::Mode;
use crate::tools::ToolShared;

/// The repository's settings file whose hooks a job may opt in to.
pub(crate) const REPO_SETTINGS: &str = ".claude/settings.json";

/// The run's hooks; problems reading the repository's file are warnings (its hooks then
/// do not run), a malformed matcher too.
pub(crate) fn build(
    config: &RunConfig,
    shared: &ToolShared,
    (run_id, out_dir, mode): (&str, &Path, Mode),
    approvals: BTreeMap<String, Approval>,
    warnings: &mut Vec<String>,
) -> Hooks {
    let job = &config.job;
    let mut defs = flatten(&job.hooks, HookOrigin::Job);
    if job.repo_hooks && config.trust.untrusted {
        warnings.push(format!(
            "repo_hooks: the repository's hooks ({REPO_SETTINGS}) do not run in untrusted mode"
        ));
    } else if job.repo_hooks {
        defs.extend(repo_hooks(&shared.workspace, warnings));
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
        sandbox: shared.sandbox().clone(),
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
    let path = workspace.join(REPO_SETTINGS);
    if !path.is_file() {
        return Vec::new();
    }
    match read_settings(&path) {
        Ok((section, skipped)) => {
            for name in skipped {
                warnings.push(format!(
                    "{REPO_SETTINGS}: hooks.{name} is not an event cn-run fires; skipped"
                ));
            }
            flatten(&section, HookOrigin::Repository)
        }
        Err(e) => {
            warnings.push(format!("repository hooks not run: {e}"));
            Vec::new()
        }
    }
}

/// People's answers to deferred calls from the command line (`--approve`, `--deny`,
/// `--reason`), each naming a call the run left waiting (a call of its last response
/// without a result); a call named by both is denied.
pub(crate) fn approvals(
    args: &crate::cli::RunArgs,
    history: &[crate::conversation::Message],
) -> Result<BTreeMap<String, Approval>, String> {
    let budget = crate::agent::Budget::new(Default::default());
    let waiting = crate::agent::RunState::new(history.to_vec(), budget).unanswered_calls();
    let mut out = BTreeMap::new();
    let answers = args.approve.iter().map(|id| (id, Approval::Approve));
    let denials = args
        .deny
        .iter()
        .map(|id| (id, Approval::Deny(args.reason.clone())));
    for (id, answer) in answers.chain(denials) {
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
