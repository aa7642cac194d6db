//! A session log that lacks its last lines while events.jsonl holds them (the log's disk
//! filled, the file was cut short in a copy, a process was killed between the two writes):
//! session.jsonl is the fold of the events, so the lines the events fold into and the log
//! lacks are appended before a resume reads it. The resume then knows every call whose
//! start was recorded in either file — and runs none of them again, as codex's rollout
//! reader answers a call it saw start.

use std::path::Path;

use super::item::Item;
use super::log::SessionLog;
use crate::redact::Redactor;

/// Appends to the log at `session` the lines the events at `events` fold into beyond it,
/// when the log is a prefix of that fold. Returns how many lines were added (0 when the
/// log is whole, when either file cannot be read, or when they do not agree).
pub fn catch_up(session: &Path, events: &Path) -> std::io::Result<usize> {
    let Ok(text) = std::fs::read_to_string(session) else {
        return Ok(0);
    };
    // A log begun from an older session.json starts with its snapshot: not a fold.
    let legacy = session.with_file_name(super::LEGACY_SESSION_FILE);
    if !super::read::is_log(&text) || legacy.exists() {
        return Ok(0);
    }
    let Ok((events, _)) = crate::report::rebuild::parse_events_noting(
        events,
        &std::fs::read_to_string(events).unwrap_or_default(),
    ) else {
        return Ok(0);
    };
    let logged: Vec<Item> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Item>(l).ok())
        .filter(|i| !matches!(i, Item::Meta { .. }))
        .collect();
    let folded = super::replay(&events);
    let agrees =
        folded.len() > logged.len() && folded.iter().zip(&logged).all(|(a, b)| same_line(a, b));
    if !agrees {
        return Ok(0);
    }
    let missing = &folded[logged.len()..];
    let mut log = SessionLog::append_to(session, &Redactor::none())?;
    if !log.append_all(missing)? {
        return Err(std::io::Error::other(
            log.health().error.unwrap_or_default(),
        ));
    }
    Ok(missing.len())
}

/// Whether two items are the same line (as written: JSON text).
fn same_line(a: &Item, b: &Item) -> bool {
    match (serde_json::to_string(a), serde_json::to_string(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
