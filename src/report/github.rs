//! GitHub Actions, when `GITHUB_ACTIONS=true`: masks for every secret value, annotations
//! for a failed run, failed checks and policy denials, a markdown step summary, and step
//! outputs (status, exit code, file paths, the structured output as one JSON line and each
//! of its top-level fields). Workflow commands go to stderr: stdout stays machine output.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::RunResult;
use crate::exit_code::Status;

mod containment;
mod not_started;
pub mod patch_files;
mod summary;

pub use not_started::{NotStarted, not_started_annotations, not_started_summary};
pub use summary::{STEP_SUMMARY_LIMIT, summary};

/// Whether we run inside GitHub Actions.
pub fn is_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// Escape a workflow command's message (`%`, CR, LF) per GitHub's rules.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a workflow command's property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `::add-mask::` lines for `values` (one per line of each value).
pub fn mask_commands<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for v in values {
        for line in v.lines().filter(|l| l.len() >= 4) {
            out.push_str(&format!("::add-mask::{}\n", escape_data(line)));
        }
    }
    out
}

/// `::error::`/`::warning::` annotations for a finished run.
pub fn annotations(r: &RunResult) -> String {
    let mut out = String::new();
    if r.status != Status::Success {
        out.push_str(&format!(
            "::error title={}::{}\n",
            escape_property(&format!("cn-run {}: {}", r.job, r.status.as_str())),
            escape_data(&r.reason)
        ));
    }
    out.push_str(&containment::warning(r));
    let last = r.checks.iter().map(|c| c.attempt).max().unwrap_or(0);
    for c in r.checks.iter().filter(|c| c.attempt == last && !c.passed) {
        let text = super::clean::clean(&c.output_tail);
        let tail: String = text
            .lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        out.push_str(&format!(
            "::error title={}::{}\n",
            escape_property(&format!("check failed: {}", c.name)),
            escape_data(&tail)
        ));
    }
    for d in &r.permission_denials {
        let hint = d
            .allow_hint
            .as_deref()
            .map(|h| format!(" Allow with {h}."))
            .unwrap_or_default();
        out.push_str(&format!(
            "::warning title={}::{}\n",
            escape_property(&format!("{} call denied", d.tool)),
            escape_data(&format!(
                "{} (rule {}, {}).{hint}",
                d.reason,
                d.rule.as_deref().unwrap_or("none"),
                d.source
            ))
        ));
    }
    out
}

/// The step outputs of a run, in the order written; action.yml declares each fixed name.
fn output_pairs(r: &RunResult) -> Vec<(String, String)> {
    let path = |name: &str| Path::new(&r.output_dir).join(name).display().to_string();
    let mut pairs: Vec<(String, String)> = vec![
        ("status".into(), r.status.as_str().into()),
        ("exit-code".into(), r.exit_code.to_string()),
        ("result".into(), path("result.json")),
        ("events".into(), r.events_path.clone()),
        ("session".into(), r.session_path.clone().unwrap_or_default()),
        ("diff".into(), r.patch_path.clone().unwrap_or_default()),
        ("junit".into(), path("junit.xml")),
        (
            "cost-usd".into(),
            r.total_cost_usd
                .map(|c| format!("{c:.6}"))
                .unwrap_or_default(),
        ),
        (
            "artifacts".into(),
            r.artifacts
                .iter()
                .map(|a| a.stored.display().to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        ("final-answer".into(), r.result.clone()),
        (
            "structured-output".into(),
            r.structured_output
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default(),
        ),
    ];
    pairs.push((
        "results".into(),
        Value::Array(vec![result_item(r)]).to_string(),
    ));
    if let Some(Value::Object(map)) = &r.structured_output {
        // Only names a workflow can refer to; any field stays in `structured-output`.
        for (k, v) in map.iter().filter(|(k, _)| is_output_name(k)) {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            pairs.push((format!("output-{k}"), text));
        }
    }
    pairs
}

/// Letters, digits, `-` and `_`: a name that cannot break the output file's syntax.
fn is_output_name(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// One run in the `results` output: how it ended and where its files are.
fn result_item(r: &RunResult) -> Value {
    let path = |name: &str| Path::new(&r.output_dir).join(name).display().to_string();
    serde_json::json!({
        "job": r.job,
        "status": r.status,
        "exit_code": r.exit_code,
        "result": path("result.json"),
        "junit": path("junit.xml"),
        "events": r.events_path,
        "session": r.session_path,
        "diff": r.patch_path,
        "cost_usd": r.total_cost_usd,
    })
}

/// The step outputs of a call that ran several jobs (or one that did not start), written
/// once: the worst `status`, the process's `exit-code`, `results` (one item per job, those
/// that did not start as `not_started` gives them), and the combined `junit` and `result`
/// (summary.json) in `top`. The per-run outputs stay empty: one value cannot stand for
/// several runs.
pub fn call_outputs(
    results: &[RunResult],
    not_started: &[Value],
    worst: Status,
    top: &Path,
) -> String {
    let items: Vec<Value> = results
        .iter()
        .map(result_item)
        .chain(not_started.iter().cloned())
        .collect();
    let pairs = vec![
        ("status".to_owned(), worst.as_str().to_owned()),
        ("exit-code".to_owned(), worst.exit_code().to_string()),
        ("results".to_owned(), Value::Array(items).to_string()),
        (
            "junit".to_owned(),
            top.join("junit.xml").display().to_string(),
        ),
        (
            "result".to_owned(),
            top.join("summary.json").display().to_string(),
        ),
    ];
    format_outputs(pairs)
}

/// `name=value` lines for $GITHUB_OUTPUT. A value with a line break uses the
/// `name<<DELIMITER` form, with a random delimiter that does not occur in the value (the
/// agent wrote some values, and must not be able to end one early and set another).
pub fn outputs(r: &RunResult) -> String {
    format_outputs(output_pairs(r))
}

fn format_outputs(pairs: Vec<(String, String)>) -> String {
    let mut out = String::new();
    for (k, v) in pairs {
        if v.contains(['\n', '\r']) {
            let delim = loop {
                let d = format!(
                    "CN_RUN_EOF_{:016x}{:016x}",
                    fastrand::u64(..),
                    fastrand::u64(..)
                );
                if !v.contains(&d) {
                    break d;
                }
            };
            out.push_str(&format!("{k}<<{delim}\n{v}\n{delim}\n"));
        } else {
            out.push_str(&format!("{k}={v}\n"));
        }
    }
    out
}

/// Append `text` to the file named by the environment variable `var`, if set.
pub fn append_to_env_file(var: &str, text: &str) {
    let Ok(path) = std::env::var(var) else { return };
    match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        Ok(mut f) => {
            let _ = f.write_all(text.as_bytes());
        }
        Err(e) => tracing::warn!("cannot write {var} ({path}): {e}"),
    }
}
