//! `cn-run schedule DIR…`: find the scheduled jobs, then list their next run times
//! (`--list`), run what is due once (`--once`), or run in the foreground until SIGTERM/SIGINT.
//!
//! Runs are started from the directory `cn-run schedule` was started in, exactly as
//! `cn-run JOB.yaml` typed there would run (job paths are made absolute). State, heartbeat
//! and run logs go to `--state-dir`, by default `.cn-run/schedule/` inside the first DIR (or
//! beside the first job file), so schedules of different job folders never share state.

use std::path::PathBuf;

use jiff::Timestamp;
use tokio::sync::watch;

use crate::cli::ScheduleArgs;
use crate::job::parse_duration;
use crate::schedule::{
    Clock, Config, Discovered, HeartbeatJob, ProcessLauncher, ScheduleError, Scheduler, Store,
    SystemClock, discover, driver,
};

use super::console::{stdout, usage_error};
use super::runtime::{Runtime, block_on};

pub(crate) fn run(args: &ScheduleArgs) -> i32 {
    let found = match discover(&args.paths) {
        Ok(f) => f,
        Err(e) => return failed(&e),
    };
    for f in &found.unscheduled {
        tracing::info!("{}: no `schedule:`; not scheduled", f.display());
    }
    let dir = state_dir(args);
    let store = Store::new(std::path::absolute(&dir).unwrap_or(dir));
    if args.list {
        return list(&found, &store, args);
    }
    if found.entries.is_empty() {
        return usage_error("no job with a `schedule:` found; nothing to schedule");
    }
    let cfg = match config(args) {
        Ok(c) => c,
        Err(e) => return failed(&e),
    };
    let stop_timeout = match parse_duration(&args.stop_timeout) {
        Ok(d) => d,
        Err(source) => {
            let flag = "--stop-timeout";
            return failed(&ScheduleError::Flag { flag, source });
        }
    };
    if let Err(e) = not_busy(&store) {
        if args.once {
            // Cron starting `--once` while the last one still runs: not an error, a skip.
            tracing::warn!("{e}: nothing started");
            return 0;
        }
        return failed(&e);
    }
    let opts = driver::Options {
        once: args.once,
        stop_timeout,
        ..driver::Options::default()
    };
    block_on(Runtime::Shared, serve(found, store, cfg, opts))
}

/// Say why the scheduler cannot start; its class decides the exit code.
fn failed(e: &ScheduleError) -> i32 {
    let text = e.to_string();
    let message = crate::redact::redact_output(&text);
    let _ = std::io::Write::write_all(
        &mut std::io::stderr().lock(),
        format!("cn-run: {message}\n").as_bytes(),
    );
    e.status().exit_code()
}

fn state_dir(args: &ScheduleArgs) -> PathBuf {
    if let Some(d) = &args.state_dir {
        return d.clone();
    }
    let first = args.paths.first().cloned().unwrap_or_default();
    let base = if first.is_dir() {
        first
    } else {
        first.parent().map(PathBuf::from).unwrap_or_default()
    };
    base.join(".cn-run").join("schedule")
}

fn config(args: &ScheduleArgs) -> Result<Config, ScheduleError> {
    let parse = |flag: &'static str, v: &str| {
        parse_duration(v).map_err(|source| ScheduleError::Flag { flag, source })
    };
    Ok(Config {
        default_timeout: parse("--default-timeout", &args.default_timeout)?,
        reap_grace: parse("--reap-grace", &args.reap_grace)?,
        ..Config::default()
    })
}

/// Refuse to start when a live scheduler wrote the heartbeat of this state folder lately.
fn not_busy(store: &Store) -> Result<(), ScheduleError> {
    let Some(beat) = store.heartbeat() else {
        return Ok(());
    };
    let fresh = Timestamp::now().duration_since(beat.time) < jiff::SignedDuration::from_secs(120);
    let alive = i32::try_from(beat.pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
    if beat.status != "stopped" && beat.pid != std::process::id() && fresh && alive {
        return Err(ScheduleError::Busy {
            pid: beat.pid,
            dir: store.dir().to_path_buf(),
        });
    }
    Ok(())
}

async fn serve(found: Discovered, store: Store, cfg: Config, opts: driver::Options) -> i32 {
    let saved = match store.load() {
        Ok(s) => s,
        Err(e) => return failed(&e),
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("cn-run"));
    let mut launcher = ProcessLauncher {
        exe,
        cwd,
        log_dir: store.logs_dir(),
    };
    let clock = SystemClock;
    tracing::info!(
        "scheduling {} job(s); state and logs in {}",
        found.entries.len(),
        store.dir().display()
    );
    let mut sched = Scheduler::new(found.entries, &saved, clock.now(), cfg, &mut launcher);
    let (tx, rx) = watch::channel(0u32);
    let signals = tokio::spawn(listen(tx));
    let code = driver::run(&mut sched, &clock, &mut launcher, &store, rx, &opts).await;
    signals.abort();
    code
}

/// Count SIGTERM/SIGINT into `tx`.
async fn listen(tx: watch::Sender<u32>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("cannot listen for SIGTERM/SIGINT");
        return;
    };
    loop {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        tx.send_modify(|n| *n += 1);
        let n = *tx.borrow();
        if n == 1 {
            tracing::info!("stop requested: no new runs; waiting for running ones (again: kill)");
        }
    }
}

/// `--list`: each job with its next run times and last result.
fn list(found: &Discovered, store: &Store, args: &ScheduleArgs) -> i32 {
    let saved = store.load().unwrap_or_default();
    let now = args.from.unwrap_or_else(Timestamp::now);
    let jobs: Vec<HeartbeatJob> = found
        .entries
        .iter()
        .map(|e| {
            let state = saved.jobs.get(&e.key).cloned().unwrap_or_default();
            HeartbeatJob {
                name: e.name.clone(),
                file: e.file.display().to_string(),
                cron: e.schedule.cron.clone(),
                timezone: e.schedule.timezone.clone(),
                missed: e.schedule.missed,
                next_runs: e
                    .tab
                    .upcoming(now, args.count)
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                running: state.running,
                last_result: state.last_result,
            }
        })
        .collect();
    if args.json {
        stdout(&(serde_json::to_string_pretty(&jobs).unwrap_or_default() + "\n"));
    } else {
        stdout(&render(&jobs, found, now, args.count));
    }
    0
}

/// The text of `--list`.
fn render(jobs: &[HeartbeatJob], found: &Discovered, now: Timestamp, count: usize) -> String {
    let mut out = String::new();
    for (job, entry) in jobs.iter().zip(&found.entries) {
        let missed = serde_json::to_value(job.missed).unwrap_or_default();
        out.push_str(&format!("{}  ({})\n", job.name, job.file));
        out.push_str(&format!(
            "  schedule  {}  {}  missed: {}\n",
            job.cron,
            job.timezone,
            missed.as_str().unwrap_or_default()
        ));
        for (i, z) in entry.tab.upcoming(now, count).iter().enumerate() {
            let label = if i == 0 { "next" } else { "" };
            out.push_str(&format!(
                "  {label:<8}  {}\n",
                z.strftime("%a %Y-%m-%d %H:%M %Z")
            ));
        }
        if let Some(r) = &job.last_result {
            let code = r
                .exit_code
                .map_or_else(|| "-".to_owned(), |c| c.to_string());
            out.push_str(&format!(
                "  last      {} {} (exit {code})\n",
                r.started_at, r.status
            ));
        }
    }
    if found.entries.is_empty() {
        out.push_str("no job with a `schedule:`\n");
    }
    out
}
