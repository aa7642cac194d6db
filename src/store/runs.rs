//! `cn-run runs --store URL`: the runs a store holds, each with its outcome and cost,
//! folded from its events.jsonl as every output is (a run killed before its end shows
//! as `internal_error`, "the run did not finish", with what its events counted).

use futures_util::StreamExt;
use object_store::ObjectStore as _;
use serde::Serialize;

use super::{RunStore, StoreError};
use crate::report::rebuild::parse_events;

/// One run in a store.
#[derive(Debug, Clone, Serialize)]
pub struct StoredRun {
    pub run_id: String,
    pub job: String,
    /// When its first event was written.
    pub started: Option<String>,
    /// `success`, `task_failed`, `limit_reached`, … (`internal_error` for a run that did
    /// not finish); null when it has no events.
    pub status: Option<crate::exit_code::Status>,
    pub exit_code: Option<i32>,
    pub reason: String,
    pub num_turns: u32,
    pub total_cost_usd: Option<f64>,
    /// Whether its events end with `run.completed`.
    pub finished: bool,
    /// Where it is: `STORE/RUN_ID` (what `--resume` takes).
    pub url: String,
}

/// Every run under the store's prefix, oldest first.
pub async fn list_runs(store: &RunStore) -> Result<Vec<StoredRun>, StoreError> {
    let prefix = (!store.prefix.as_ref().is_empty()).then_some(&store.prefix);
    let listed = store
        .inner
        .list_with_delimiter(prefix)
        .await
        .map_err(|e| store.backend(e))?;
    let mut runs = Vec::new();
    for dir in listed.common_prefixes {
        let Some(id) = dir.filename().map(str::to_owned) else {
            continue;
        };
        runs.push(describe(store, &id).await?);
    }
    runs.sort_by(|a, b| (&a.started, &a.run_id).cmp(&(&b.started, &b.run_id)));
    Ok(runs)
}

async fn describe(store: &RunStore, id: &str) -> Result<StoredRun, StoreError> {
    let url = format!("{}/{id}", store.url());
    let mut run = StoredRun {
        run_id: id.to_owned(),
        job: String::new(),
        started: None,
        status: None,
        exit_code: None,
        reason: "no events".to_owned(),
        num_turns: 0,
        total_cost_usd: None,
        finished: false,
        url,
    };
    let Some(raw) = store.get(id, "events.jsonl").await? else {
        return Ok(run);
    };
    let text = String::from_utf8_lossy(&raw);
    let Ok(events) = parse_events(std::path::Path::new("events.jsonl"), &text) else {
        run.reason = "events.jsonl does not read back".to_owned();
        return Ok(run);
    };
    let folded = crate::report::fold(&events);
    run.started = events.first().map(|e| e.ts.clone());
    run.finished = events
        .iter()
        .any(|e| matches!(e.event, crate::events::Event::RunCompleted { .. }));
    run.job = folded.job;
    run.status = Some(folded.status);
    run.exit_code = Some(folded.exit_code);
    run.reason = folded.reason;
    run.num_turns = folded.num_turns;
    run.total_cost_usd = folded.total_cost_usd;
    Ok(run)
}

/// Every object of run `id`: its name in the run folder.
pub(super) async fn objects(store: &RunStore, id: &str) -> Result<Vec<String>, StoreError> {
    let base = store.prefix.clone().join(id);
    let mut listed = store.inner.list(Some(&base));
    let mut names = Vec::new();
    while let Some(meta) = listed.next().await {
        let meta = meta.map_err(|e| store.backend(e))?;
        let rel: Vec<String> = meta
            .location
            .prefix_match(&base)
            .map(|parts| parts.map(|p| p.as_ref().to_owned()).collect())
            .unwrap_or_default();
        if !rel.is_empty() {
            names.push(rel.join("/"));
        }
    }
    Ok(names)
}
