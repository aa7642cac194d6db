//! GitHub Actions, when `GITHUB_ACTIONS=true`: masks for every secret value, annotations
//! for a failed run, failed checks and policy denials, a markdown step summary, and step
//! outputs (status, exit code, file paths, each top-level field of the structured output).
//! Workflow commands go to stderr: stdout stays machine output.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::RunResult;
use crate::exit_code::Status;

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
    let last = r.checks.iter().map(|c| c.attempt).max().unwrap_or(0);
    for c in r.checks.iter().filter(|c| c.attempt == last && !c.passed) {
        let tail: String = c
            .output_tail
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

fn cost(r: &RunResult) -> String {
    r.total_cost_usd
        .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"))
}

/// The markdown step summary of one run.
pub fn summary(r: &RunResult) -> String {
    let icon = if r.status == Status::Success {
        "✅"
    } else {
        "❌"
    };
    let mut md = format!("### {icon} cn-run `{}`: {}\n\n", r.job, r.status.as_str());
    md.push_str(&format!("{}\n\n", r.reason));
    md.push_str("| exit code | turns | attempts | tokens in / out | cost | duration |\n|---|---|---|---|---|---|\n");
    md.push_str(&format!(
        "| {} | {} | {} | {} / {} | {} | {:.1} s |\n\n",
        r.exit_code,
        r.num_turns,
        r.attempts,
        r.usage.input_tokens,
        r.usage.output_tokens,
        cost(r),
        r.duration_ms as f64 / 1000.0
    ));
    if !r.checks.is_empty() {
        md.push_str("| check | attempt | result | time |\n|---|---|---|---|\n");
        for c in &r.checks {
            let res = if c.passed {
                "✅ passed".to_owned()
            } else {
                format!(
                    "❌ failed ({})",
                    c.exit_code
                        .map_or("killed".to_owned(), |e| format!("exit {e}"))
                )
            };
            md.push_str(&format!(
                "| {} | {} | {res} | {:.1} s |\n",
                c.name,
                c.attempt,
                c.duration_ms as f64 / 1000.0
            ));
        }
        md.push('\n');
    }
    if let Some(d) = &r.diff {
        md.push_str(&format!(
            "**Changes:** {} files, +{} −{}",
            d.files, d.insertions, d.deletions
        ));
        if let Some(p) = &r.patch_path {
            md.push_str(&format!(" (`{p}`)"));
        }
        md.push_str("\n\n");
    }
    if !r.permission_denials.is_empty() {
        md.push_str("| denied call | rule | source | reason |\n|---|---|---|---|\n");
        for d in &r.permission_denials {
            let args = d.arguments.to_string().replace('|', "\\|");
            let args: String = args.chars().take(80).collect();
            md.push_str(&format!(
                "| {} `{args}` | `{}` | {} | {} |\n",
                d.tool,
                d.rule.as_deref().unwrap_or("-"),
                d.source,
                d.reason.replace('|', "\\|")
            ));
        }
        md.push('\n');
    }
    if !r.result.trim().is_empty() {
        md.push_str("<details><summary>Final answer</summary>\n\n");
        md.push_str(r.result.trim());
        md.push_str("\n\n</details>\n\n");
    }
    md
}

/// `name=value` lines for $GITHUB_OUTPUT (multi-line values use a delimiter).
pub fn outputs(r: &RunResult) -> String {
    let mut pairs: Vec<(String, String)> = vec![
        ("status".into(), r.status.as_str().into()),
        ("exit-code".into(), r.exit_code.to_string()),
        (
            "result".into(),
            Path::new(&r.output_dir)
                .join("result.json")
                .display()
                .to_string(),
        ),
        ("events".into(), r.events_path.clone()),
        ("session".into(), r.session_path.clone().unwrap_or_default()),
        ("diff".into(), r.patch_path.clone().unwrap_or_default()),
        (
            "junit".into(),
            Path::new(&r.output_dir)
                .join("junit.xml")
                .display()
                .to_string(),
        ),
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
    ];
    if let Some(Value::Object(map)) = &r.structured_output {
        for (k, v) in map {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            pairs.push((format!("output-{k}"), text));
        }
    }
    let mut out = String::new();
    for (k, v) in pairs {
        if v.contains('\n') {
            let delim = format!("CN_RUN_EOF_{:08x}", fastrand::u32(..));
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
