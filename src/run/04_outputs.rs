//! Step 4 of a run: its outputs. Every output the events go to (the run's files, the
//! log, the terminal, telemetry), attached before the first event.
//!
//! The output folder of a run and the sinks every event goes to: events.jsonl, the result
//! builder, the session log, stream-json on stdout and the progress lines on stderr.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::place::Placed;
use super::start_error::{RunError, StartError};
use crate::agent::StopSignal;
use crate::append_log::AppendLog;
use crate::cli::Format;
use crate::config::RunConfig;
use crate::events::{Emitter, EventSink as _};
use crate::observability::LogHandle;
use crate::redact::Redactor;
use crate::report::jsonl::{EventFile, Unrecorded};
use crate::report::progress::ProgressSink;
use crate::report::{JsonlSink, ResultSink};
use crate::run::RunOptions;
use crate::session::SessionSink;

/// `--out DIR`, or `.cn-run/<run-id>` (the `.cn-run` folder ignores itself in git). A
/// folder that cannot be made or written is an environment error (exit 6), in words.
pub(crate) fn output_dir(out: Option<&Path>, run_id: &str) -> Result<PathBuf, StartError> {
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => cn_run_root()
            .map_err(|e| StartError::run_folder(Path::new(ROOT), &e))?
            .join(run_id),
    };
    std::fs::create_dir_all(&dir).map_err(|e| StartError::run_folder(&dir, &e))?;
    // Writable, not only there: a mounted folder owned by another user passes the above.
    tempfile::tempfile_in(&dir).map_err(|e| StartError::run_folder(&dir, &e))?;
    dir.canonicalize()
        .map_err(|e| StartError::run_folder(&dir, &e))
}

/// The folder of cn-run's own runs and worktrees in the current directory.
pub(crate) const ROOT: &str = ".cn-run";

/// `.cn-run`, made if missing with the `.gitignore` that keeps git from seeing it: written
/// once (it only needs to exist), before anything else goes there — a worktree or a run
/// folder made before it would show in the repository's status, and so in another
/// `--parallel` job's worktree.
pub(crate) fn cn_run_root() -> std::io::Result<PathBuf> {
    cn_run_root_in(Path::new(""))
}

/// [`cn_run_root`] in `base` (`""`: the current directory). A `.cn-run` that is a symbolic
/// link is refused: a pull request can commit one (`.cn-run -> ../../elsewhere`), and the
/// run's records would be written wherever it points.
pub(crate) fn cn_run_root_in(base: &Path) -> std::io::Result<PathBuf> {
    let root = base.join(ROOT);
    if root
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err(std::io::Error::other(format!(
            "{} is a symbolic link; cn-run keeps its runs in a folder of its own there \
             (remove the link, or name the run's folder with --out)",
            root.display()
        )));
    }
    std::fs::create_dir_all(&root)?;
    let ignore = root.join(".gitignore");
    if !ignore.exists() {
        let _ = crate::out_file::write_whole(&ignore, &[b"*\n"]);
    }
    Ok(root)
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
    /// The outputs that write a file of their own (`file_outputs`).
    pub file_outputs: Vec<super::file_outputs::Attached>,
}

/// Attaches every sink to the run's emitter (nothing is emitted before). A resumed run
/// appends to its events. `unrecorded` is told when a tool call's start cannot be written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attach(
    emitter: &Emitter,
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
        file_outputs: Vec::new(),
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

/// Every output the events go to, with the log and GitHub's masks told the secrets.
pub(crate) fn attach_outputs(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    placed: &Placed,
    emitter: &Arc<Emitter>,
    redactor: &Redactor,
    stop: &StopSignal,
) -> Result<Sinks, StartError> {
    opts.log.set_redactor(redactor);
    // The run writes its own records from here: what an earlier run (or process) left
    // that reports an outcome goes, so none of it can stand for this run's.
    super::run_files::clear_outcome_files(&placed.out_dir)
        .map_err(|e| RunError::run_folder(&placed.out_dir, e))?;
    if crate::report::github::is_actions() {
        let values = redactor.values();
        let masks = crate::report::github::mask_commands(values.iter().map(String::as_str));
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), masks.as_bytes());
    }
    let sinks = attach(
        emitter,
        &placed.out_dir,
        &config.job().name,
        config.format(),
        opts.log,
        redactor,
        placed.resumed,
        unrecorded(stop),
    )?;
    let mut sinks = sinks;
    let earlier = || match placed.resumed {
        true => crate::report::rebuild::read_events(&placed.out_dir.join("events.jsonl"))
            .unwrap_or_default(),
        false => Vec::new(),
    };
    sinks.file_outputs = super::file_outputs::attach(config, &placed.out_dir, emitter, earlier);
    Ok(sinks)
}

/// The run's trace and, when telemetry is exported, its sink among the outputs.
pub(crate) fn start_telemetry(
    config: &RunConfig,
    opts: &RunOptions<'_>,
    emitter: &Emitter,
    redactor: &Redactor,
) -> Option<crate::telemetry::RunTrace> {
    let telemetry = opts.log.telemetry.as_ref()?;
    let (trace, sink) = telemetry.start_run(redactor, config.job().capture_content);
    if let Some(sink) = sink {
        emitter.add_sink(sink);
    }
    Some(trace)
}

/// A tool call whose start the run's files cannot record stops the run (exit 6, in words).
fn unrecorded(stop: &StopSignal) -> crate::report::jsonl::Unrecorded {
    let stop = stop.clone();
    Arc::new(move |why: String| stop.stop(crate::agent::StopCause::Environment(why)))
}
