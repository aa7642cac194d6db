//! `cn-run explain JOB`: the run's resolved configuration, policy, limits and tools, and
//! where each came from. It goes through the run's own resolution (`RunConfig::resolve`
//! and `RunConfig::enforced_policy`), so what it shows is what a run with the same flags
//! enforces — an untrusted run (`--untrusted`, `untrusted_paths:`) included.

use crate::cli::ExplainArgs;
use crate::config::{Call, RunConfig, Settings};
use crate::job::{self, LoadOptions};

use super::console::{start_failed, stdout, stdout_json, usage_error};
use crate::run::setup;
use crate::run::start_error::RunError;

/// The configuration a run of this job with these flags resolves to.
fn resolve(args: &ExplainArgs) -> Result<RunConfig, RunError> {
    let settings = Settings::of_policy(args.policy.clone());
    let opts = LoadOptions {
        params: settings.policy.params.clone(),
        ..Default::default()
    };
    let job = job::load_file(&args.job, &opts)?;
    Ok(RunConfig::resolve(job, settings, Call::default())?)
}

/// What `explain` shows, gathered the way a run gathers it.
struct Explained {
    config: RunConfig,
    policy: crate::permissions::Policy,
    repo_files: crate::repo_files::RepoFiles,
    repo_note: Option<String>,
    mcp_servers: Vec<serde_json::Value>,
    tools: Vec<String>,
    /// How Bash commands are contained: `contained`, `readonly`, `meaning`.
    commands: serde_json::Value,
    /// What this machine enforces of the job's sandbox, probed as a run probes it.
    containment: Option<crate::sandbox::SandboxStatus>,
    rules: Vec<serde_json::Value>,
}

pub(super) fn explain(args: &ExplainArgs) -> i32 {
    let e = match gather(args) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if args.json {
        stdout_json(&json_value(&e));
    } else {
        stdout(&text(&e));
    }
    0
}

/// Resolve the configuration, build the policy and the offered tools; the exit code of a
/// failure (said on stderr).
fn gather(args: &ExplainArgs) -> Result<Explained, i32> {
    let config = resolve(args).map_err(start_failed)?;
    let (job, workspace) = (config.job(), config.workspace());
    let (policy, repo_files, repo_note) = config
        .enforced_policy(workspace)
        .map_err(|e| start_failed(RunError::from(e)))?;
    let (policy, mcp_servers) = super::explain_mcp::explain_servers(job, workspace, policy)
        .map_err(|e| usage_error(&e.to_string()))?;
    let mcp_tools = mcp_servers
        .iter()
        .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
        .filter(|t| t["offered"] == true)
        .filter_map(|t| t["name"].as_str().map(str::to_owned));
    let plan = policy.mode() == crate::permissions::Mode::Plan;
    let (_, sandbox_status, _) = setup::sandbox(&setup::SandboxAsk {
        job,
        workspace,
        out_dir: None,
        env: &[],
        require: config.require_sandbox(),
        read_only: plan,
    });
    let context = crate::permissions::command_context(policy.mode(), sandbox_status.as_ref());
    let tools: Vec<String> = crate::tools::builtin_tools(&job.model.name)
        .iter()
        .map(|t| t.name().to_owned())
        .filter(|n| policy.is_offered(n))
        .chain(mcp_tools)
        .collect();
    let rules = rule_rows(job, &repo_files);
    let commands = serde_json::json!({
        "contained": context.contained,
        "readonly": context.read_only,
        "meaning": context.describe(),
    });
    Ok(Explained {
        config,
        policy,
        repo_files,
        repo_note,
        mcp_servers,
        tools,
        commands,
        containment: sandbox_status,
        rules,
    })
}

/// `explain --json`.
fn json_value(e: &Explained) -> serde_json::Value {
    let (job, policy) = (&e.config.job(), &e.policy);
    let view = e.config.view();
    serde_json::json!({
        "job": job.name,
        "mode": policy.mode().as_str(),
        "on_ask": view.on_ask,
        "model": view.model,
        "limits": view.limits,
        "trust": view.trust,
        "repository_files": instructions_from(&e.repo_files),
        "repository_note": e.repo_note,
        "config": view,
        "tools_offered": e.tools,
        "sandbox": sandbox_summary(job, e.containment.as_ref()),
        "containment": e.containment,
        "mcp_servers": e.mcp_servers,
        "commands": e.commands,
        "rules": e.rules,
        "policy": policy.table(),
        "hooks": crate::run::user_hooks::explained(&e.config).0,
        "hooks_note": crate::run::user_hooks::explained(&e.config).1,
    })
}

/// `explain` for a reader.
fn text(e: &Explained) -> String {
    let (config, job) = (&e.config, &e.config.job());
    let mut text = format!(
        "job: {}\nworkspace: {}\nmode: {}   on_ask: {}\n",
        job.name,
        config.workspace().display(),
        e.policy.mode().as_str(),
        wire_name(&config.agent().on_ask)
    );
    text.push_str(&format!(
        "model: {} {}\n",
        wire_name(&job.model.provider),
        job.model.name
    ));
    text.push_str(&format!("limits: {}\n", limits_text(config)));
    text.push_str(&config_text(config, &e.repo_files, e.repo_note.as_deref()));
    text.push_str(&format!("tools offered: {}\n", e.tools.join(", ")));
    text.push_str(&format!(
        "sandbox: {}\n",
        sandbox_summary(job, e.containment.as_ref())
    ));
    let checked = serde_json::to_value(&e.containment).unwrap_or_default();
    text.push_str(&sandbox_checked(&checked));
    let meaning = e.commands["meaning"].as_str().unwrap_or_default();
    text.push_str(&format!("bash commands: {meaning}\n"));
    if let Some(note) = edit_tool_note(&e.tools) {
        text.push_str(&format!("  ({note})\n"));
    }
    text.push_str(&super::explain_mcp::servers_text(&e.mcp_servers));
    text.push_str(&policy_text(&e.policy));
    text.push_str(&crate::run::user_hooks::explained_text(config));
    text.push_str("rules:\n");
    for row in &e.rules {
        text.push_str(&format!(
            "  {:<28} {:<40} {}\n",
            row["name"].as_str().unwrap_or(""),
            row["origin"].as_str().unwrap_or(""),
            row["applies"].as_str().unwrap_or("")
        ));
    }
    text
}

/// The policy table, first match first.
fn policy_text(policy: &crate::permissions::Policy) -> String {
    let mut text = "policy (first match wins):\n".to_owned();
    for row in policy.table() {
        let source = serde_json::to_value(row.source)
            .ok()
            .and_then(|s| s.as_str().map(str::to_owned))
            .unwrap_or_default();
        let file = row.file.map(|f| format!(" ({f})")).unwrap_or_default();
        text.push_str(&format!(
            "  {:<8} {:<40} {source}{file}\n",
            row.permission.as_str(),
            row.pattern
        ));
    }
    if !policy.table().iter().any(|row| row.pattern == "*") {
        text.push_str("  ask      (no match)\n");
    }
    text.push_str("  (Bash commands are also judged by the safety evaluator: disabled ones never run, and\n   ones it cannot prove safe need an allow rule that names them, e.g. Bash(cargo *);\n   try `cn-run check-command CMD`.)\n");
    text
}

/// How the job's commands are contained on this machine, in one line: what the job asks
/// for, and what the probe (the run's own) found enforced here (`off` is spelled out).
fn sandbox_summary(job: &crate::job::Job, here: Option<&crate::sandbox::SandboxStatus>) -> String {
    let t = &job.tools;
    let off = t.bash_sandbox == crate::sandbox::SandboxMode::Off;
    let hosts: Vec<String> = t
        .bash_network_hosts
        .iter()
        .map(ToString::to_string)
        .collect();
    let network = if !hosts.is_empty() {
        format!("only {} through cn-run's proxy", hosts.join(", "))
    } else if t.bash_network.unwrap_or(off) {
        "allowed".to_owned()
    } else {
        "none".to_owned()
    };
    match t.bash_sandbox {
        crate::sandbox::SandboxMode::Off => format!(
            "OFF (tools.bash.sandbox: off): commands run uncontained, with the whole \
             filesystem and environment; network {network}"
        ),
        mode => {
            let asked = format!("{} (network: {network})", mode.as_str());
            match here {
                Some(s) if s.missing.is_empty() && !s.enforced.is_empty() => {
                    format!("{asked}, enforced here by {}", s.mechanism)
                }
                Some(s) => format!(
                    "{asked}, NOT fully enforced here: {} enforces {}, not {} ({})",
                    s.mechanism,
                    protections(&s.enforced),
                    protections(&s.missing),
                    s.notes.join("; ")
                ),
                None => format!("{asked}, not probed"),
            }
        }
    }
}

fn protections(list: &[crate::sandbox::Protection]) -> String {
    match list {
        [] => "nothing".to_owned(),
        _ => list.iter().map(wire_name).collect::<Vec<_>>().join(", "),
    }
}

/// What the start-up probe found of the sandbox here: enforced, missing, git, limits.
fn sandbox_checked(status: &serde_json::Value) -> String {
    let list = |k: &str| {
        let v: Vec<&str> = status[k]
            .as_array()
            .map(|a| a.iter().filter_map(|p| p.as_str()).collect())
            .unwrap_or_default();
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    let l = &status["limits"];
    let limits = match l["memory_bytes"].as_u64() {
        Some(m) => format!(
            "memory {} MiB ({}), processes {} ({}), tmp {} MiB, file size {} MiB",
            m >> 20,
            l["memory_by"].as_str().unwrap_or(""),
            l["processes"],
            l["processes_by"].as_str().unwrap_or(""),
            l["tmp_bytes"].as_u64().unwrap_or(0) >> 20,
            l["file_size_bytes"].as_u64().unwrap_or(0) >> 20
        ),
        None => "none".to_owned(),
    };
    format!(
        "  enforced (checked here): {}\n  missing: {}\n  git: {}\n  limits: {limits}\n",
        list("enforced"),
        list("missing"),
        status["git"].as_str().unwrap_or("read-only"),
    )
}

/// An enum as the job file spells it (`deny`, `openai`).
fn wire_name(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn limits_text(config: &RunConfig) -> String {
    let limits = &config.job().limits;
    let none = || "none".to_owned();
    let (timeout, source) = config.timeout();
    let timeout_source = match source {
        "default" => " (the default: the job sets none)",
        "flag" => " (--timeout)",
        _ => "",
    };
    format!(
        "max_turns {}, timeout {}s{timeout_source}, max_cost_usd {}, max_tokens {}, max_calls_per_response {}",
        limits.max_turns.map_or_else(none, |n| n.to_string()),
        timeout.as_secs(),
        limits.max_cost_usd.map_or_else(none, |c| format!("{c:.2}")),
        limits.max_tokens.map_or_else(none, |n| n.to_string()),
        config.agent().max_calls,
    )
}

/// Where repository instructions (AGENTS.md, rules, permissions.yaml) come from.
fn instructions_from(repo_files: &crate::repo_files::RepoFiles) -> String {
    use crate::repo_files::RepoFiles;
    match repo_files {
        RepoFiles::Workdir(ws) => format!("the workspace {}", ws.display()),
        RepoFiles::Nothing => "nowhere (untrusted, no base ref)".to_owned(),
        RepoFiles::Stored(_) => "the files as the run read them at its start".to_owned(),
        RepoFiles::Commit { .. } => format!("the trusted base commit {}", repo_files.describe("")),
    }
}

/// The trust settings and the model's context window, as the run resolves them.
fn config_text(
    config: &RunConfig,
    repo_files: &crate::repo_files::RepoFiles,
    note: Option<&str>,
) -> String {
    let trust = config.trust();
    let (context_length, source) = config.context_length();
    let mut text = format!("context length: {context_length} ({source})\n");
    if !trust.untrusted {
        text.push_str("trust: trusted (repository instructions from the workspace)\n");
        return text;
    }
    let what = match trust.paths.as_slice() {
        [] => "the whole workspace (--untrusted)".to_owned(),
        paths => format!("untrusted_paths {}", paths.join(", ")),
    };
    text.push_str(&format!(
        "trust: UNTRUSTED — {what}; base ref {}; instructions from {}\n",
        config.base_ref().unwrap_or("none"),
        instructions_from(repo_files)
    ));
    if let Some(note) = note {
        text.push_str(&format!("  ({note})\n"));
    }
    text
}

/// Which edit tool the model gets, since rules and scripts may name the other.
fn edit_tool_note(tools: &[String]) -> Option<&'static str> {
    let has = |name: &str| tools.iter().any(|t| t == name);
    match (
        has(crate::catalog::EDIT.name),
        has(crate::catalog::MULTI_EDIT.name),
    ) {
        (false, true) => Some(
            "MultiEdit, not Edit: the model name decides which one a run offers; rules naming either cover both",
        ),
        (true, false) => Some(
            "Edit, not MultiEdit: the model name decides which one a run offers; rules naming either cover both",
        ),
        _ => None,
    }
}

/// Every rule of the job and of the repository files the run reads (in untrusted mode the
/// trusted base's), and when it applies.
fn rule_rows(
    job: &crate::job::Job,
    repo_files: &crate::repo_files::RepoFiles,
) -> Vec<serde_json::Value> {
    use crate::rules::Applies;
    let (ws_rules, warnings) = crate::rules::workspace_rules(repo_files);
    let mut rows: Vec<serde_json::Value> = job
        .rules
        .iter()
        .chain(ws_rules.iter())
        .map(|r| {
            let applies = match &r.applies {
                Applies::Always => "always (in every system message)".to_owned(),
                Applies::OnTouch { globs, regex } => {
                    let mut what: Vec<String> = globs
                        .iter()
                        .map(|(g, _)| format!("a file matching `{g}`"))
                        .collect();
                    what.extend(
                        regex
                            .iter()
                            .map(|x| format!("a file containing `{}`", x.as_str())),
                    );
                    format!("once the run touches {}", what.join(" or "))
                }
                Applies::Never(why) => format!("never: {why}"),
            };
            serde_json::json!({"name": r.name, "origin": r.origin, "applies": applies})
        })
        .collect();
    rows.extend(
        warnings
            .into_iter()
            .map(|w| serde_json::json!({"name": "-", "origin": "-", "applies": w})),
    );
    rows
}
