//! Commands that inspect rather than run: `schema`, `check-command` and `explain`.

use std::io::BufRead;

use crate::cli::{CheckCommandArgs, ExplainArgs, SchemaKind};
use crate::command_safety::{self, Level};
use crate::job::{self, LoadOptions};

use super::setup::{self, PolicyFlags};
use super::{stdout, usage_error};

pub(super) fn schema(which: SchemaKind) -> i32 {
    let value = match which {
        SchemaKind::Job => job::job_schema(),
        SchemaKind::Result => serde_json::to_value(schemars::schema_for!(crate::report::RunResult))
            .unwrap_or_default(),
        SchemaKind::Event => crate::events::event_schema(),
    };
    stdout(&format!(
        "{}\n",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    ));
    0
}

fn verdict_json(command: &str) -> serde_json::Value {
    let v = command_safety::evaluate(command);
    serde_json::json!({"command": command, "level": v.level, "rule": v.rule, "reason": v.reason})
}

pub(super) fn check_command(args: &CheckCommandArgs) -> i32 {
    if let Some(cmd) = &args.command {
        let v = command_safety::evaluate(cmd);
        if args.jsonl {
            stdout(&format!("{}\n", verdict_json(cmd)));
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
        stdout(&format!("{}\n", verdict_json(&command)));
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
    let policy = match setup::build_policy(&job, &flags, &workspace) {
        Ok(p) => p,
        Err(e) => return usage_error(&e),
    };
    let tools: Vec<String> = setup::all_tools(&job.model.name)
        .iter()
        .map(|t| t.name().to_owned())
        .filter(|n| policy.is_offered(n))
        .collect();
    let value = serde_json::json!({
        "job": job.name,
        "mode": policy.mode().as_str(),
        "on_ask": job.permissions.on_ask,
        "model": {"provider": job.model.provider, "name": job.model.name, "api_base": job.model.api_base},
        "limits": {
            "max_turns": job.limits.max_turns,
            "timeout_s": job.limits.timeout.map(|d| d.as_secs_f64()),
            "max_cost_usd": job.limits.max_cost_usd,
            "max_tokens": job.limits.max_tokens,
        },
        "tools_offered": tools,
        "rules": job.rules.iter().map(|r| &r.origin).collect::<Vec<_>>(),
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
        "job: {}\nmode: {}   on_ask: {:?}\n",
        job.name,
        policy.mode().as_str(),
        job.permissions.on_ask
    );
    text.push_str(&format!(
        "model: {:?} {}\n",
        job.model.provider, job.model.name
    ));
    text.push_str(&format!("limits: {}\n", value["limits"]));
    text.push_str(&format!("tools offered: {}\n", value["tools_offered"]));
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
    text.push_str("  ask      (no match)\n");
    stdout(&text);
    0
}
