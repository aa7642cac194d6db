//! `cn-run runs --store URL`: the runs a run store holds, oldest first, each with its
//! outcome and cost folded from its events (one line each, or `--json`).

use super::console::{stdout, stdout_json, usage_error};
use crate::cli::RunsArgs;
use crate::exit_code::Status;
use crate::store::{RunStore, StoredRun, list_runs};

pub(super) fn run(args: &RunsArgs) -> i32 {
    let store = match RunStore::open(&args.store) {
        Ok(s) => s,
        Err(e) => return usage_error(&e.to_string()),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let runs = match runtime.block_on(list_runs(&store)) {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    if args.json {
        stdout_json(&runs);
    } else {
        runs.iter().for_each(|r| stdout(&line(r)));
    }
    0
}

/// A store that cannot be read is the environment (exit 6).
fn fail(message: &str) -> i32 {
    let _ = usage_error(message);
    Status::InternalError.exit_code()
}

fn line(r: &StoredRun) -> String {
    let status = r
        .status
        .map(|s| serde_json::to_value(s).ok())
        .and_then(|v| v.and_then(|v| v.as_str().map(str::to_owned)))
        .unwrap_or_else(|| "-".to_owned());
    let cost = r
        .total_cost_usd
        .map_or("cost unknown".to_owned(), |c| format!("${c:.4}"));
    let exit = r.exit_code.map_or("-".to_owned(), |c| c.to_string());
    format!(
        "{}  {:<20} {:<16} exit {:<3} {:>4} turns  {:<12}  {}{}\n",
        r.run_id,
        r.job,
        status,
        exit,
        r.num_turns,
        cost,
        r.started.as_deref().unwrap_or("-"),
        if r.finished { "" } else { "  (did not finish)" }
    )
}
