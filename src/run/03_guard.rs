//! Step 3 of a run: guard it — the policy it enforces (the configuration's, in the placed
//! workspace), its containment (set up on its own thread; the first command waits), and
//! the job's and repository's rules with the warnings about them.

use std::sync::Arc;

use super::place::Placed;
use super::setup;
use super::start_error::StartError;
use crate::config::RunConfig;
use crate::events::Emitter;
use crate::permissions::Policy;
use crate::repo_files::RepoFiles;
use crate::rules::RuleDef;

/// The policy, containment and rules of a placed run.
pub(crate) struct Guard {
    pub policy: Arc<Policy>,
    pub repo_files: RepoFiles,
    /// The run's containment, perhaps still being set up (the first command waits).
    pub sandbox: crate::sandbox::Deferred,
    /// `Err(reason)`: the run requires containment it cannot have.
    pub sandbox_verdict: Result<Option<String>, setup::SandboxRefused>,
    /// The job's and the repository's rules.
    pub rules: Vec<RuleDef>,
    pub warnings: Vec<String>,
}

impl Guard {
    /// The rules that join once the run touches a matching file.
    pub(crate) fn conditional_rules(&self) -> Vec<RuleDef> {
        let on_touch = |r: &&RuleDef| matches!(r.applies, crate::rules::Applies::OnTouch { .. });
        self.rules.iter().filter(on_touch).cloned().collect()
    }
}

/// The policy the run enforces (the configuration's, in the placed workspace), its
/// containment, and the job's and repository's rules with the warnings about them.
pub(crate) fn guard(
    config: &RunConfig,
    placed: &Placed,
    env: &[(String, String)],
    emitter: &Arc<Emitter>,
) -> Result<Guard, StartError> {
    let ws = &placed.workspace;
    let (built, repo_files, repo_note) =
        super::resume_trust::enforced_policy(config, ws, &placed.out_dir, placed.resumed)?;
    // The evaluator must know whether commands run contained (and a read-only run kept so):
    // the first command judged waits for the sandbox.
    let mode = built.mode();
    let (sandbox, sandbox_verdict) = setup::deferred_sandbox(
        config.job(),
        ws,
        Some(&placed.out_dir),
        env,
        (
            config.require_sandbox(),
            mode == crate::permissions::Mode::Plan,
        ),
        sandbox_ready(emitter),
    );
    let deferred = sandbox.clone();
    let policy = Arc::new(built.with_context_later(move || {
        crate::permissions::command_context(mode, Some(&deferred.get().status))
    }));
    let (workspace_rules, mut warnings) = crate::rules::workspace_rules(&repo_files);
    warnings.extend(repo_note);
    warnings.extend(setup::repo_rule_warnings(&policy));
    warnings.extend(config.policy_warnings());
    let rules = config
        .job()
        .rules
        .iter()
        .cloned()
        .chain(workspace_rules)
        .collect();
    Ok(Guard {
        policy,
        repo_files,
        sandbox,
        sandbox_verdict,
        rules,
        warnings,
    })
}

/// When the sandbox set up on its own thread is first needed: what it enforces, and a
/// warning when not everything is (a run that requires it all settled that at start).
fn sandbox_ready(emitter: &Arc<Emitter>) -> crate::sandbox::OnReady {
    let emitter = emitter.clone();
    Box::new(move |established| {
        emitter.emit(crate::events::Event::SandboxEstablished {
            sandbox: Box::new(established.status.clone()),
        });
        let verdict = setup::sandbox_verdict(&established.policy, &established.probe);
        if let Ok(Some(message)) = verdict {
            emitter.emit(crate::events::Event::Warning { message });
        }
    })
}
