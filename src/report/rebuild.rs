//! The outputs of a run rebuilt from its events.jsonl alone: what `cn-run report` writes
//! for a run that was killed or whose files were lost, and what the test suite compares
//! with the files every run wrote. The run itself renders its files with the same
//! functions ([`result_text`], [`junit_xml`]), so both write the same bytes.

use std::path::{Path, PathBuf};

use super::{RunResult, fold};
use crate::events::Envelope;
use crate::redact::Redactor;

/// Why a run folder's events could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: not an event of this version of cn-run: {source}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    #[error("{}: no events", path.display())]
    Empty { path: PathBuf },
}

/// The events of an events.jsonl text, in order. A line that is not an event — a last
/// line cut short (the run was killed while writing it), or a line damaged anywhere — is
/// skipped and named on stderr; the fold goes on with the rest.
pub fn parse_events(path: &Path, text: &str) -> Result<Vec<Envelope>, EventsError> {
    let (events, skipped) = parse_events_noting(path, text)?;
    for note in skipped {
        tracing::warn!("{note}");
    }
    Ok(events)
}

/// As [`parse_events`], with the lines skipped said in words (not logged).
pub fn parse_events_noting(
    path: &Path,
    text: &str,
) -> Result<(Vec<Envelope>, Vec<String>), EventsError> {
    let mut events = Vec::new();
    let mut skipped = Vec::new();
    let torn_tail = !text.is_empty() && !text.ends_with('\n');
    let count = text.lines().count();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Envelope>(line) {
            Ok(env) => events.push(env),
            Err(_) if torn_tail && i + 1 == count => {}
            Err(source) => skipped.push(
                EventsError::Line {
                    path: path.to_path_buf(),
                    line: i + 1,
                    source,
                }
                .to_string()
                    + "; the line is skipped",
            ),
        }
    }
    if events.is_empty() {
        return Err(EventsError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok((events, skipped))
}

/// The events of a file (see [`parse_events`]).
pub fn read_events(path: &Path) -> Result<Vec<Envelope>, EventsError> {
    let text = std::fs::read_to_string(path).map_err(|source| EventsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_events(path, &text)
}

/// result.json's text: pretty JSON, secrets masked, one final newline.
pub fn result_text(result: &RunResult, redactor: &Redactor) -> String {
    let text = serde_json::to_string_pretty(result).unwrap_or_default();
    let mut text = redactor.redact(&text).into_owned();
    text.push('\n');
    text
}

/// junit.xml of one run, and its testsuite (for a combined report of several runs).
pub fn junit_xml(result: &RunResult, redactor: &Redactor) -> (quick_junit::TestSuite, String) {
    let suite = super::junit::suite(result, redactor);
    let xml = super::junit::render(vec![suite.clone()]);
    (suite, xml)
}

/// A run's outputs rebuilt from its folder's events.jsonl.
#[derive(Debug)]
pub struct Rebuilt {
    pub result: RunResult,
    pub result_json: String,
    pub junit_xml: String,
}

/// Rebuilds result.json and junit.xml of the run in `dir` (nothing is written). The
/// events were masked by the run; `redactor` masks what else the caller knows of.
pub fn rebuild(dir: &Path, redactor: &Redactor) -> Result<Rebuilt, EventsError> {
    let events = read_events(&dir.join("events.jsonl"))?;
    let result = fold(&events);
    let (_, junit_xml) = junit_xml(&result, redactor);
    Ok(Rebuilt {
        result_json: result_text(&result, redactor),
        junit_xml,
        result,
    })
}
