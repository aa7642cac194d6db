//! Missed runs and adoption, as the README documents them: a job's first occurrence that no
//! scheduler was up for is missed like any other (`run-once` runs it, `skip` records it); a
//! fresh scheduler runs an occurrence up to a minute old; a run adopted after the scheduler
//! was killed ends with the exit code its log holds.

use std::time::Duration;

use cn_run::job::Missed;
use cn_run::schedule::{Config, EventKind, PersistedState, ProcessLauncher, Scheduler, Store};
use jiff::Timestamp;
use serde_json::Value;

use super::schedule::{Fake, drain, entry, fake_exe, kinds, started_then_gone, ts};
use crate::support::runner::{cn_run, write_files};

/// Schedulers up at `ups` (each saves its state and goes), then one at `back`: its starts.
fn first_occurrence_while_down(missed: Missed, ups: &[&str], back: &str) -> (Scheduler, Fake) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path());
    let job = || vec![entry("weekly", "0 3 * * 1", "UTC", missed)];
    for up in ups {
        let mut fake = Fake::finishing();
        let saved = store.load().unwrap();
        let mut sched = Scheduler::new(job(), &saved, ts(up), Config::default(), &mut fake);
        sched.tick(ts(up), &mut fake);
        assert!(fake.starts().is_empty(), "nothing is due at {up}");
        store.save(&sched.snapshot()).unwrap();
    }
    let mut fake = Fake::finishing();
    let saved = store.load().unwrap();
    let mut sched = Scheduler::new(job(), &saved, ts(back), Config::default(), &mut fake);
    sched.tick(ts(back), &mut fake);
    (sched, fake)
}

#[test]
fn a_first_occurrence_missed_while_the_scheduler_was_down_follows_the_policy() {
    // Up on Sunday 1 June (and again that evening), down over Monday 03:00, back at 09:00.
    let ups: &[&[&str]] = &[
        &["2025-06-01T12:00:00Z"],
        &["2025-06-01T12:00:00Z", "2025-06-01T20:00:00Z"],
    ];
    for ups in ups {
        let (sched, fake) =
            first_occurrence_while_down(Missed::RunOnce, ups, "2025-06-02T09:00:00Z");
        assert_eq!(
            fake.starts(),
            [("weekly".to_owned(), ts("2025-06-02T09:00:00Z"))],
            "{ups:?}: run-once runs the missed first occurrence"
        );
        let missed: Vec<_> = sched
            .events()
            .filter(|e| e.kind == EventKind::MissedRunOnce)
            .collect();
        assert!(
            missed[0]
                .message
                .starts_with("1 run(s) missed since 2025-06-02T03:00:00Z"),
            "{missed:?}"
        );
        let last = sched.snapshot().jobs["/jobs/weekly.yaml"].clone();
        assert_eq!(last.last_due, Some(ts("2025-06-02T03:00:00Z")));

        let (sched, fake) = first_occurrence_while_down(Missed::Skip, ups, "2025-06-02T09:00:00Z");
        assert!(fake.starts().is_empty(), "skip does not run it");
        assert!(
            kinds(&sched).contains(&EventKind::MissedSkipped),
            "but records it"
        );
        assert_eq!(sched.next_due(), [Some(ts("2025-06-09T03:00:00Z"))]);
    }
    // Back before the first occurrence: nothing was missed.
    let (sched, fake) = first_occurrence_while_down(
        Missed::RunOnce,
        &["2025-06-01T12:00:00Z"],
        "2025-06-02T02:00:00Z",
    );
    assert!(fake.starts().is_empty() && kinds(&sched).is_empty());
    assert_eq!(sched.next_due(), [Some(ts("2025-06-02T03:00:00Z"))]);
}

#[test]
fn a_fresh_scheduler_runs_an_occurrence_up_to_a_minute_old() {
    for (at, runs) in [
        ("2025-06-02T03:00:00Z", true),
        ("2025-06-02T03:00:59Z", true),
        ("2025-06-02T03:01:00Z", true),
        ("2025-06-02T03:01:01Z", false),
    ] {
        let mut fake = Fake::finishing();
        let jobs = vec![entry("weekly", "0 3 * * 1", "UTC", Missed::RunOnce)];
        let now = ts(at);
        let mut sched = Scheduler::new(
            jobs,
            &PersistedState::default(),
            now,
            Config::default(),
            &mut fake,
        );
        sched.tick(now, &mut fake);
        assert_eq!(fake.starts().len(), usize::from(runs), "{at}");
        assert!(
            !kinds(&sched).contains(&EventKind::MissedRunOnce),
            "{at}: never seen, never missed"
        );
    }
}

/// The run's script: runs a while, prints a result as `cn-run --format json` does, exits.
const PRINTS_ITS_RESULT: &str = "sleep 1\nprintf '{\\n  \"type\": \"result\",\\n  \"status\": \"provider_error\",\\n  \"exit_code\": 5\\n}\\n'\nexit 5";

#[test]
fn a_run_adopted_after_its_scheduler_died_ends_with_the_exit_code_its_log_holds() {
    // (the run's script, the exit code and status the adopting scheduler records)
    let cases = [
        (PRINTS_ITS_RESULT, Some(5), "provider_error"),
        // Control: a run that printed no result has no code to read.
        ("sleep 1\nexit 5", None, "unknown"),
    ];
    for (script, code, status) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let mut launcher = ProcessLauncher {
            exe: fake_exe(tmp.path(), script),
            cwd: tmp.path().to_path_buf(),
            log_dir: tmp.path().join("logs"),
        };
        let job = || vec![entry("long", "*/5 * * * *", "UTC", Missed::Skip)];
        let (saved, pid) = started_then_gone(&mut launcher, job());
        let t1 = ts("2025-06-02T10:00:01Z");
        let mut second = Scheduler::new(job(), &saved, t1, Config::default(), &mut launcher);
        assert!(kinds(&second).contains(&EventKind::Adopted));
        second.hold();
        drain(&mut second, &mut launcher, t1);
        let last = second.snapshot().jobs["/jobs/long.yaml"]
            .last_result
            .clone()
            .unwrap();
        assert_eq!(
            (last.exit_code, last.status.as_str(), last.pid),
            (code, status, Some(pid))
        );
    }
}

/// End to end: `cn-run schedule` is SIGKILLed while its run is in a failing check; the next
/// `cn-run schedule --once` adopts the run, waits for it, records the exit code the run
/// printed (1, checks still fail) and exits with it.
#[test]
fn after_a_sigkill_the_next_scheduler_reports_the_adopted_runs_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            (
                "jobs/slow.yaml",
                "version: 1\nname: slow\nmodel: {provider: script, name: s, script: s.yaml}\n\
                 prompt: say hello\nchecks: [{name: wait, run: \"sleep 3; exit 1\"}]\n\
                 schedule: \"* * * * *\"\n",
            ),
            ("jobs/s.yaml", "turns:\n  - text: hello\n"),
        ],
    );
    let beat_path = tmp.path().join("jobs/.cn-run/schedule/heartbeat.json");
    let mut first = cn_run(tmp.path());
    first.args(["schedule", "jobs"]);
    first
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut first = first.spawn().unwrap();
    let run_pid = wait_for(Duration::from_secs(20), || {
        let beat: Value = serde_json::from_str(&std::fs::read_to_string(&beat_path).ok()?).ok()?;
        beat["jobs"][0]["running"]["pid"].as_u64()
    })
    .expect("the job never started");
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(
        std::path::Path::new(&format!("/proc/{run_pid}")).exists(),
        "the run outlives its scheduler"
    );

    let mut second = cn_run(tmp.path());
    second.args(["schedule", "--once", "jobs"]);
    let out = second.output().unwrap();
    let beat: Value = serde_json::from_str(&std::fs::read_to_string(&beat_path).unwrap()).unwrap();
    let last = &beat["jobs"][0]["last_result"];
    assert_eq!(last["pid"], run_pid, "{beat:#}");
    assert_eq!(
        (last["exit_code"].as_i64(), last["status"].as_str()),
        (Some(1), Some("failed")),
        "{beat:#}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Poll `f` until it gives a value or `limit` passes.
fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let started = std::time::Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if started.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_first_sight_of_a_job_is_kept_in_the_state_file() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path());
    let mut fake = Fake::finishing();
    let jobs = vec![entry("weekly", "0 3 * * 1", "UTC", Missed::Skip)];
    let now: Timestamp = ts("2025-06-01T12:00:00Z");
    let sched = Scheduler::new(
        jobs,
        &PersistedState::default(),
        now,
        Config::default(),
        &mut fake,
    );
    store.save(&sched.snapshot()).unwrap();
    let text = std::fs::read_to_string(store.state_path()).unwrap();
    assert!(
        text.contains("\"since\": \"2025-06-01T11:59:00Z\""),
        "{text}"
    );
}
