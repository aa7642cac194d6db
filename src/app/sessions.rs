//! `cn-run sessions list|show|prune`: the sessions of earlier runs in `.cn-run/`, and
//! removing their git checkpoints.

use std::path::Path;

use super::console::{stdout, stdout_json, usage_error};
use crate::cli::SessionsAction;
use crate::session::{Session, SessionSummary, find_session, list_sessions};

pub(super) fn run(action: &SessionsAction) -> i32 {
    let root = Path::new(".cn-run");
    match action {
        SessionsAction::List { json } => {
            let rows: Vec<SessionSummary> = list_sessions(root)
                .iter()
                .map(|(p, s)| SessionSummary::of(p, s))
                .collect();
            if *json {
                stdout_json(&rows);
            } else {
                for r in rows {
                    stdout(&format!(
                        "{}  {:<20} {:<9} {:<16} {:>4} turns  {}\n",
                        r.session_id,
                        r.job,
                        r.state,
                        r.status.unwrap_or_default(),
                        r.turns,
                        r.updated_at
                    ));
                }
            }
            0
        }
        SessionsAction::Prune {
            runs,
            keep,
            workspace,
        } => prune(runs, *keep, workspace.as_deref()),
        SessionsAction::Show { id, json } => {
            let session =
                match find_session(root, id).and_then(|p| Session::load(&p).map(|s| (p, s))) {
                    Ok(s) => s,
                    Err(e) => return usage_error(&e.to_string()),
                };
            let (path, s) = session;
            if *json {
                stdout_json(&s);
                return 0;
            }
            let mut text = format!(
                "session {}  job {}  {:?} {}\nworkspace {}\nturns {}  tokens in/out {}/{}  cost {}\nfile {}\n\n",
                s.session_id,
                s.job.name,
                s.state,
                s.status.clone().unwrap_or_default(),
                s.workspace,
                s.turns,
                s.usage.input_tokens,
                s.usage.output_tokens,
                s.cost_usd
                    .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}")),
                path.display()
            );
            for m in &s.history {
                let (role, extra) = match m {
                    crate::conversation::Message::User { .. } => ("user", String::new()),
                    crate::conversation::Message::Assistant { tool_calls, .. } => (
                        "assistant",
                        tool_calls
                            .iter()
                            .map(|c| format!(" [{}]", c.name))
                            .collect::<String>(),
                    ),
                    crate::conversation::Message::Tool { name, .. } => {
                        ("tool", format!(" ({name})"))
                    }
                };
                let first = m.text().lines().next().unwrap_or("");
                text.push_str(&format!("{role}{extra}: {first}\n"));
            }
            stdout(&text);
            0
        }
    }
}

/// `cn-run sessions prune [RUN…] [--keep N] [-C DIR]`.
fn prune(runs: &[String], keep: Option<usize>, workspace: Option<&Path>) -> i32 {
    let ws = workspace.unwrap_or(Path::new("."));
    let report = match (keep, runs.is_empty()) {
        (Some(n), _) => crate::checkpoint::keep_newest(ws, n),
        (None, true) => crate::checkpoint::keep_newest(ws, 0),
        (None, false) => crate::checkpoint::prune(ws, runs),
    };
    answer(report, || "prune failed".to_owned())
}

/// A checkpoint command's report as JSON on stdout, or what failed (the error's exit code).
fn answer<T: serde::Serialize>(
    done: Result<T, crate::checkpoint::CheckpointError>,
    failed: impl FnOnce() -> String,
) -> i32 {
    match done {
        Ok(report) => {
            stdout_json(&report);
            0
        }
        Err(e) => {
            let _ = usage_error(&format!("{}: {e}", failed()));
            e.status().exit_code()
        }
    }
}

/// `cn-run rollback RUN [--to N] [-C DIR]`.
pub(super) fn rollback(run: &str, to: Option<u32>, workspace: Option<std::path::PathBuf>) -> i32 {
    let root = Path::new(".cn-run");
    let recorded = find_session(root, run).and_then(|p| Session::load(&p)).ok();
    let run_id = recorded
        .as_ref()
        .map_or_else(|| run.to_owned(), |s| s.session_id.clone());
    let Some(ws) = workspace.or_else(|| recorded.as_ref().map(|s| s.workspace.clone().into()))
    else {
        return usage_error(&format!(
            "no session for `{run}` under .cn-run; give the workspace with -C DIR"
        ));
    };
    answer(crate::checkpoint::rollback(&ws, &run_id, to), || {
        format!("rollback of {run_id} failed")
    })
}
