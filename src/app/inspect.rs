//! Commands that inspect rather than run: `schema`, `check-command` and `explain`.

use crate::agent::budget::{max_calls_per_response, run_timeout};
use std::io::BufRead;

use crate::cli::{CheckCommandArgs, ExplainArgs, SchemaKind};
use crate::command_safety::{self, Level};
use crate::job::{self, LoadOptions};

use super::setup::{self, PolicyFlags};
use super::{stdout, usage_error};

pub(super) fn schema(which: SchemaKind) -> i32 {
    let value = match which {
        SchemaKind::Job => job::job_schema(),
        SchemaKind::Result => crate::json_schema::schema_for::<crate::report::RunResult>(),
        SchemaKind::Event => crate::events::event_schema(),
    };
    stdout(&format!(
        "{}\n",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    ));
    0
}

fn verdict_json(command: &str, context: command_safety::Context) -> serde_json::Value {
    let v = command_safety::evaluate_in(command, context);
    serde_json::json!({
        "command": command, "level": v.level, "rule": v.rule, "reason": v.reason,
        "contained": context.contained, "readonly": context.read_only,
    })
}

pub(super) fn check_command(args: &CheckCommandArgs) -> i32 {
    let context = command_safety::Context {
        contained: !args.uncontained,
        read_only: args.readonly,
    };
    eprintln!("cn-run: judged as {}", context.describe());
    if let Some(cmd) = &args.command {
        let v = command_safety::evaluate_in(cmd, context);
        if args.jsonl {
            stdout(&format!("{}\n", verdict_json(cmd, context)));
        } else {
            let level = serde_json::to_value(v.level)
                .ok()
                .and_then(|l| l.as_str().map(str::to_owned))
                .unwrap_or_default();
            stdout(&format!("{level}\t{}\t{}\n", v.rule, v.reason));
        }
        return match v.level {
            Level::AllowedWithoutPermission => 0,
            Level::AllowedWithPermission => 1,
            Level::Disabled => 3,
        };
    }
    if !args.jsonl {
        return usage_error(
            "check-command needs a COMMAND, or --jsonl to read commands from stdin",
        );
    }
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let command = if line.starts_with('"') {
            match serde_json::from_str::<String>(&line) {
                Ok(c) => c,
                Err(e) => {
                    stdout(&format!(
                        "{}\n",
                        serde_json::json!({"command": line, "error": format!("not a JSON string: {e}")})
                    ));
                    continue;
                }
            }
        } else {
            line
        };
        stdout(&format!("{}\n", verdict_json(&command, context)));
    }
    0
}

pub(super) fn explain(args: &ExplainArgs) -> i32 {
    let opts = LoadOptions {
        params: args.params.clone(),
    };
    let job = match job::load_file(&args.job, &opts) {
        Ok(j) => j,
        Err(e) => return usage_error(&e.to_string()),
    };
    let workspace = match job
        .workspace
        .path
        .clone()
        .unwrap_or_else(|| ".".into())
        .canonicalize()
    {
        Ok(w) => w,
        Err(e) => return usage_error(&format!("workspace: {e}")),
    };
    let flags = PolicyFlags {
        allow: &args.allow,
        ask: &args.ask,
        exclude: &args.exclude,
        auto: args.auto,
        readonly: args.readonly,
    };
    // The run's own function: an `untrusted_paths` job is explained as it runs (no auto
    // mode, repository files from the trusted base).
    let untrusted = !job.untrusted_paths.is_empty();
    let policy = match setup::enforced_policy(&job, &flags, &workspace, None, untrusted) {
        Ok((p, _, _)) => p,
        Err(e) => return usage_error(&e),
    };
    let (policy, mcp_servers) = match super::explain_mcp::explain_servers(&job, &workspace, policy)
    {
        Ok(p) => p,
        Err(e) => return usage_error(&e),
    };
    let mcp_tools = mcp_servers
        .iter()
        .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
        .filter(|t| t["offered"] == true)
        .filter_map(|t| t["name"].as_str().map(str::to_owned));
    let plan = policy.mode() == crate::permissions::Mode::Plan;
    let (_, sandbox_status, _) = setup::sandbox(&job, &workspace, &[], false, plan);
    let context = crate::permissions::command_context(policy.mode(), sandbox_status.as_ref());
    let tools: Vec<String> = crate::tools::builtin_tools(&job.model.name)
        .iter()
        .map(|t| t.name().to_owned())
        .filter(|n| policy.is_offered(n))
        .chain(mcp_tools)
        .collect();
    let value = serde_json::json!({
        "job": job.name,
        "mode": policy.mode().as_str(),
        "on_ask": job.permissions.on_ask,
        "model": {"provider": job.model.provider, "name": job.model.name, "api_base": job.model.api_base},
        "limits": {
            "max_turns": job.limits.max_turns,
            "timeout_s": run_timeout(&job.limits).0.as_secs_f64(),
            "timeout_source": run_timeout(&job.limits).1,
            "max_cost_usd": job.limits.max_cost_usd,
            "max_tokens": job.limits.max_tokens,
            "max_calls_per_response": max_calls_per_response(&job.limits),
        },
        "tools_offered": tools,
        "sandbox": sandbox_summary(&job),
        "mcp_servers": mcp_servers,
        "commands": {
            "contained": context.contained,
            "readonly": context.read_only,
            "meaning": context.describe(),
        },
        "rules": rule_rows(&job, &workspace),
        "policy": policy.table(),
    });
    if args.json {
        stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
        return 0;
    }
    let mut text = format!(
        "job: {}\nworkspace: {}\nmode: {}   on_ask: {}\n",
        job.name,
        workspace.display(),
        policy.mode().as_str(),
        wire_name(&job.permissions.on_ask)
    );
    text.push_str(&format!(
        "model: {} {}\n",
        wire_name(&job.model.provider),
        job.model.name
    ));
    text.push_str(&format!("limits: {}\n", limits_text(&job.limits)));
    text.push_str(&format!("tools offered: {}\n", tools.join(", ")));
    text.push_str(&format!("sandbox: {}\n", sandbox_summary(&job)));
    text.push_str(&format!("bash commands: {}\n", context.describe()));
    if let Some(note) = edit_tool_note(&tools) {
        text.push_str(&format!("  ({note})\n"));
    }
    text.push_str(&super::explain_mcp::servers_text(&mcp_servers));
    text.push_str("policy (first match wins):\n");
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
    text.push_str("rules:\n");
    for row in rule_rows(&job, &workspace) {
        text.push_str(&format!(
            "  {:<28} {:<40} {}\n",
            row["name"].as_str().unwrap_or(""),
            row["origin"].as_str().unwrap_or(""),
            row["applies"].as_str().unwrap_or("")
        ));
    }
    stdout(&text);
    0
}

/// How the job's commands are contained, in one line (`off` is spelled out).
fn sandbox_summary(job: &crate::job::Job) -> String {
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
        mode => format!("{} (network: {network})", mode.as_str()),
    }
}

/// An enum as the job file spells it (`deny`, `openai`).
fn wire_name(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn limits_text(limits: &crate::job::Limits) -> String {
    let none = || "none".to_owned();
    let (timeout, source) = run_timeout(limits);
    let timeout_source = if source == "default" {
        " (the default: the job sets none)"
    } else {
        ""
    };
    format!(
        "max_turns {}, timeout {}s{timeout_source}, max_cost_usd {}, max_tokens {}, max_calls_per_response {}",
        limits.max_turns.map_or_else(none, |n| n.to_string()),
        timeout.as_secs(),
        limits.max_cost_usd.map_or_else(none, |c| format!("{c:.2}")),
        limits.max_tokens.map_or_else(none, |n| n.to_string()),
        max_calls_per_response(limits),
    )
}

/// Which edit tool the model gets, since rules and scripts may name the other.
fn edit_tool_note(tools: &[String]) -> Option<&'static str> {
    let has = |name: &str| tools.iter().any(|t| t == name);
    match (has("Edit"), has("MultiEdit")) {
        (false, true) => Some(
            "MultiEdit, not Edit: the model name decides which one a run offers; rules naming either cover both",
        ),
        (true, false) => Some(
            "Edit, not MultiEdit: the model name decides which one a run offers; rules naming either cover both",
        ),
        _ => None,
    }
}

/// Every rule of the job and the workspace, and when it applies.
fn rule_rows(job: &crate::job::Job, workspace: &std::path::Path) -> Vec<serde_json::Value> {
    use crate::rules::Applies;
    let (ws_rules, warnings) = crate::rules::workspace_rules(
        &crate::repo_files::RepoFiles::Workdir(workspace.to_path_buf()),
    );
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
