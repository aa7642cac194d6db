//! Commands that inspect rather than run: `schema` and `check-command` (`explain` has its
//! own file).

use std::io::BufRead;

use crate::cli::{CheckCommandArgs, SchemaKind};
use crate::command_safety::{self, Level};
use crate::job;

use super::console::{stdout, stdout_json, usage_error};

pub(super) fn schema(which: SchemaKind) -> i32 {
    let value = match which {
        SchemaKind::Job => job::job_schema(),
        SchemaKind::Result => crate::json_schema::schema_for::<crate::report::RunResult>(),
        SchemaKind::Event => crate::events::event_schema(),
    };
    stdout_json(&value);
    0
}

fn verdict_json(command: &str, context: command_safety::Context) -> serde_json::Value {
    let v = command_safety::evaluate_in(command, context);
    serde_json::json!({
        "command": command, "level": v.level, "rule": v.rule, "reason": v.reason,
        "contained": context.contained, "readonly": context.read_only,
    })
}

/// The context a run started here would judge commands in: this machine's containment
/// probed as a run probes it (the default profile, the current folder as the workspace),
/// unless `--contained` or `--uncontained` says which to assume. Says on stderr which, and
/// why.
fn judging_context(args: &CheckCommandArgs) -> command_safety::Context {
    let mode = if args.readonly {
        crate::permissions::Mode::Plan
    } else {
        crate::permissions::Mode::Headless
    };
    if args.contained || args.uncontained {
        let context = command_safety::Context {
            contained: args.contained,
            read_only: args.readonly,
        };
        eprintln!("cn-run: judged as {} (as asked)", context.describe());
        return context;
    }
    let sandbox = if args.readonly {
        crate::sandbox::SandboxMode::ReadOnly
    } else {
        crate::sandbox::SandboxMode::WorkspaceWrite
    };
    let workspace = std::env::current_dir().unwrap_or_default();
    let policy = crate::sandbox::SandboxPolicy::new(sandbox, false, &workspace, &[]);
    let (policy, probe) = crate::sandbox::establish(policy);
    let status = crate::sandbox::describe(&probe, &policy);
    let context = crate::permissions::command_context(mode, Some(&status));
    let why = match probe.shortfall() {
        Some(shortfall) => format!(
            "; this machine does not contain commands fully: {shortfall} (--contained judges as a contained run would)"
        ),
        None => format!("; {} contains commands here", status.mechanism),
    };
    eprintln!("cn-run: judged as {}{why}", context.describe());
    context
}

pub(super) fn check_command(args: &CheckCommandArgs) -> i32 {
    let context = judging_context(args);
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
