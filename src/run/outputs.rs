//! The output folder of a run and the sinks every event goes to: events.jsonl, the result
//! builder, the session log, stream-json on stdout and the progress lines on stderr.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::start_error::{RunError, StartError};
use crate::append_log::AppendLog;
use crate::cli::Format;
use crate::events::Emitter;
use crate::events::EventSink as _;
use crate::observability::LogHandle;
use crate::redact::Redactor;
use crate::report::jsonl::{EventFile, Unrecorded};
use crate::report::progress::ProgressSink;
use crate::report::{JsonlSink, ResultSink};
use crate::session::SessionSink;

/// `--out DIR`, or `.cn-run/<run-id>` (the `.cn-run` folder ignores itself in git). A
/// folder that cannot be made or written is an environment error (exit 6), in words.
pub(crate) fn output_dir(out: Option<&Path>, run_id: &str) -> Result<PathBuf, StartError> {
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => {
            let root = PathBuf::from(".cn-run");
            std::fs::create_dir_all(&root).map_err(|e| StartError::run_folder(&root, &e))?;
            // Written once (not on every run): it only needs to exist.
            let ignore = root.join(".gitignore");
            if !ignore.exists() {
                let _ = std::fs::write(ignore, "*\n");
            }
            root.join(run_id)
        }
    };
    std::fs::create_dir_all(&dir).map_err(|e| StartError::run_folder(&dir, &e))?;
    // Writable, not only there: a mounted folder owned by another user passes the above.
    tempfile::tempfile_in(&dir).map_err(|e| StartError::run_folder(&dir, &e))?;
    dir.canonicalize()
        .map_err(|e| StartError::run_folder(&dir, &e))
}

/// The highest `seq` in an events file (a resumed run continues after it).
pub(crate) fn last_seq(events: &Path) -> u64 {
    std::fs::read_to_string(events)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("seq").and_then(serde_json::Value::as_u64))
        .max()
        .unwrap_or(0)
}

pub(crate) struct Sinks {
    pub result: ResultSink,
    /// The session log (opened once the conversation is known).
    pub session: SessionSink,
    /// events.jsonl (its health decides whether the run's outcome is on disk).
    pub events: Arc<Mutex<AppendLog>>,
}

/// Attaches every sink to the run's emitter (nothing is emitted before). A resumed run
/// appends to its events. `unrecorded` is told when a tool call's start cannot be written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attach(
    emitter: Arc<Emitter>,
    out_dir: &Path,
    job: &str,
    format: Format,
    log: &LogHandle,
    redactor: &Redactor,
    resume: bool,
    unrecorded: Unrecorded,
) -> Result<Sinks, RunError> {
    let events_path = out_dir.join("events.jsonl");
    // The result is the fold of the whole file: a resumed run continues its events.
    let result = ResultSink::default();
    if resume {
        emitter.resume_at(last_seq(&events_path));
        seed(&result, &events_path);
    }
    let files_error = |source| RunError::RunFiles {
        path: events_path.clone(),
        source,
    };
    // A resumed run continues after the last whole line: a torn one (the earlier process
    // killed while writing it) would glue the next event to it, and the reader leaves it out.
    let events = if resume {
        AppendLog::continue_at(&events_path)
    } else {
        AppendLog::create(&events_path)
    };
    let events = Arc::new(Mutex::new(events.map_err(files_error)?));
    emitter.add_sink(Box::new(EventFile::new(
        events.clone(),
        redactor.clone(),
        unrecorded.clone(),
    )));
    emitter.add_sink(Box::new(result.clone()));
    let session = SessionSink::new();
    session.on_unrecorded(unrecorded);
    emitter.add_sink(Box::new(session.clone()));
    if format == Format::StreamJson {
        emitter.add_sink(Box::new(JsonlSink::new(
            std::io::stdout(),
            redactor.clone(),
        )));
    }
    match &log.live {
        Some(display) => emitter.add_sink(Box::new(crate::report::live::LiveSink::new(
            display,
            job,
            redactor.clone(),
        ))),
        None => emitter.add_sink(Box::new(ProgressSink::new(log.clone(), job))),
    }
    Ok(Sinks {
        result,
        session,
        events,
    })
}

/// Feeds the events of the runs before a resumed one to its result (a file that cannot
/// be read back is said, and the result then starts with the resumed run).
fn seed(result: &ResultSink, events_path: &Path) {
    let mut sink = result.clone();
    match crate::report::rebuild::read_events(events_path) {
        Ok(events) => events.iter().for_each(|e| sink.on_event(e)),
        Err(e) => tracing::warn!("the earlier events of this run are not in its result: {e}"),
    }
}
