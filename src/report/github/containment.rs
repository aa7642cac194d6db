//! What the step's page says of a run's containment: one line of the step summary always
//! (what held, or what did not and why), and a `::warning` when the run's commands were
//! contained only in part or not at all — a runner whose kernel refuses bubblewrap (such
//! as GitHub's ubuntu-24.04 images, whose AppArmor restricts unprivileged user namespaces)
//! must not look like one that contained everything.

use super::{escape_data, escape_property};
use crate::report::RunResult;
use crate::sandbox::{ContainedBy, SandboxMode, SandboxStatus};

fn names(list: &[crate::sandbox::Protection]) -> String {
    list.iter()
        .map(|p| {
            serde_json::to_value(p)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the profile the job asked for is not all in force.
fn partial(s: &SandboxStatus) -> bool {
    s.mode != SandboxMode::Off && !s.missing.is_empty()
}

/// What was not contained and why, in one sentence.
fn shortfall(s: &SandboxStatus) -> String {
    let mut text = format!(
        "commands ran with {} containment; not in force: {}",
        s.mechanism,
        names(&s.missing)
    );
    if !s.notes.is_empty() {
        text.push_str(&format!(" ({})", s.notes.join("; ")));
    }
    text.push_str(". Build and test commands the job does not allow then need permission; see the README's install section.");
    text
}

/// The `::warning` of a run contained in part (nothing when all held or it was off).
pub(super) fn warning(r: &RunResult) -> String {
    match &r.sandbox {
        Some(s) if partial(s) => format!(
            "::warning title={}::{}\n",
            escape_property(&format!("cn-run {}: partial containment", r.job)),
            escape_data(&shortfall(s))
        ),
        _ => String::new(),
    }
}

/// The step summary's containment line.
pub(super) fn line(r: &RunResult) -> String {
    let text = match &r.sandbox {
        None => "**Containment:** off (no sandbox record)".to_owned(),
        Some(s) if s.mode == SandboxMode::Off => {
            "**Containment:** off (the job sets `sandbox: off`)".to_owned()
        }
        Some(s) if matches!(s.mechanism, ContainedBy::Pending | ContainedBy::NotNeeded) => format!(
            "**Containment:** {}, not set up: the run started no command before it ended",
            s.mode.as_str()
        ),
        Some(s) if partial(s) => format!("⚠️ **Containment: partial** — {}", shortfall(s)),
        Some(s) => format!(
            "**Containment:** {} ({}): {}",
            s.mechanism,
            s.mode.as_str(),
            names(&s.enforced)
        ),
    };
    format!("{}\n\n", super::summary::html_text(&text))
}
