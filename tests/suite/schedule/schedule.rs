//! `cn-run schedule`: the scheduler core driven by made-up times (runs on time across DST
//! changes, no overlap, the missed-run policy after downtime, stuck runs reaped), the loop
//! with a fake clock (heartbeat, graceful and forced stop), real child processes reaped by
//! signal, and the binary end to end (`--once`, `--list`, bad schedules).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cn_run::job::{LoadOptions, Missed, Schedule, load_str};
use cn_run::schedule::{
    Config, Entry, EventKind, FakeClock, InFlight, Launcher, PersistedState, ProcessLauncher,
    RunExit, RunHandle, ScheduleError, Scheduler, Started, Store, driver,
};
use jiff::Timestamp;
use serde_json::Value;

use crate::support::runner::{cn_run, run, write_files};

pub(crate) fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

pub(crate) fn entry(name: &str, cron: &str, tz: &str, missed: Missed) -> Entry {
    let schedule = Schedule {
        cron: cron.to_owned(),
        timezone: tz.to_owned(),
        missed,
    };
    Entry {
        key: format!("/jobs/{name}.yaml"),
        name: name.to_owned(),
        file: format!("/jobs/{name}.yaml").into(),
        tab: schedule.compile().unwrap(),
        schedule,
        timeout: None,
    }
}

/// One fake run: ends when the test says so, or on SIGTERM unless told to ignore it.
#[derive(Default)]
struct FakeRun {
    exit: Option<RunExit>,
    terminated: bool,
    killed: bool,
    ignore_term: bool,
}

struct FakeHandle(Arc<Mutex<FakeRun>>);

impl RunHandle for FakeHandle {
    fn pid(&self) -> Option<u32> {
        Some(4242)
    }
    fn try_wait(&mut self) -> Option<RunExit> {
        self.0.lock().unwrap().exit
    }
    fn terminate(&mut self) {
        let mut r = self.0.lock().unwrap();
        r.terminated = true;
        if !r.ignore_term {
            r.exit = Some(RunExit {
                code: Some(130),
                signal: None,
            });
        }
    }
    fn kill(&mut self) {
        let mut r = self.0.lock().unwrap();
        r.killed = true;
        r.exit = Some(RunExit {
            code: None,
            signal: Some(9),
        });
    }
}

/// Records every start; runs end with exit 0 at once when `auto_finish`.
#[derive(Clone, Default)]
pub(crate) struct Fake {
    starts: Arc<Mutex<Vec<(String, Timestamp)>>>,
    runs: Arc<Mutex<Vec<Arc<Mutex<FakeRun>>>>>,
    auto_finish: bool,
    ignore_term: bool,
}

impl Fake {
    pub(crate) fn finishing() -> Fake {
        Fake {
            auto_finish: true,
            ..Fake::default()
        }
    }
    pub(crate) fn starts(&self) -> Vec<(String, Timestamp)> {
        self.starts.lock().unwrap().clone()
    }
    fn run(&self, i: usize) -> Arc<Mutex<FakeRun>> {
        self.runs.lock().unwrap()[i].clone()
    }
    fn finish(&self, i: usize, code: i32) {
        self.run(i).lock().unwrap().exit = Some(RunExit {
            code: Some(code),
            signal: None,
        });
    }
}

impl Launcher for Fake {
    fn start(&mut self, entry: &Entry, now: Timestamp) -> Result<Started, ScheduleError> {
        self.starts.lock().unwrap().push((entry.name.clone(), now));
        let run = Arc::new(Mutex::new(FakeRun {
            ignore_term: self.ignore_term,
            exit: self.auto_finish.then_some(RunExit {
                code: Some(0),
                signal: None,
            }),
            ..FakeRun::default()
        }));
        self.runs.lock().unwrap().push(run.clone());
        Ok(Started {
            handle: Box::new(FakeHandle(run)),
            log: None,
        })
    }
    fn adopt(&mut self, _entry: &Entry, _run: &InFlight) -> Option<Box<dyn RunHandle>> {
        None
    }
}

/// Tick at every time the scheduler asks to be woken, from `from` until `until`.
fn walk(sched: &mut Scheduler, fake: &mut Fake, from: Timestamp, until: Timestamp) -> usize {
    let mut now = from;
    let mut ticks = 0;
    while now <= until {
        sched.tick(now, fake);
        ticks += 1;
        now = sched
            .next_wake(now)
            .max(now + jiff::SignedDuration::from_secs(1));
    }
    ticks
}

pub(crate) fn kinds(sched: &Scheduler) -> Vec<EventKind> {
    sched.events().map(|e| e.kind).collect()
}

#[test]
fn weekly_runs_start_on_time_across_a_dst_change() {
    let mut fake = Fake::finishing();
    let start = ts("2025-03-20T12:00:00Z");
    let jobs = vec![entry("weekly", "0 3 * * 1", "Europe/Berlin", Missed::Skip)];
    // Without the heartbeat's 30 s wake-ups, the loop wakes only for occurrences and runs.
    let cfg = Config {
        heartbeat_every: Duration::from_secs(30 * 86400),
        ..Config::default()
    };
    let mut sched = Scheduler::new(jobs, &PersistedState::default(), start, cfg, &mut fake);
    let ticks = walk(&mut sched, &mut fake, start, ts("2025-04-15T00:00:00Z"));
    let times: Vec<Timestamp> = fake.starts().into_iter().map(|(_, t)| t).collect();
    // 03:00 in Berlin is 02:00 UTC before 30 March (CET) and 01:00 UTC after (CEST).
    assert_eq!(
        times,
        vec![
            ts("2025-03-24T02:00:00Z"),
            ts("2025-03-31T01:00:00Z"),
            ts("2025-04-07T01:00:00Z"),
            ts("2025-04-14T01:00:00Z"),
        ]
    );
    // It sleeps until the next thing to do: per run, the occurrence and one poll.
    assert!(ticks <= 10, "{ticks} ticks for 26 days");
    assert!(!kinds(&sched).contains(&EventKind::SkippedOverlap));
}

#[test]
fn daily_time_in_the_spring_gap_runs_after_it_and_the_autumn_repeat_runs_once() {
    let mut fake = Fake::finishing();
    let jobs = vec![entry(
        "nightly",
        "30 2 * * *",
        "Europe/Berlin",
        Missed::Skip,
    )];
    let start = ts("2025-03-28T12:00:00Z");
    let mut sched = Scheduler::new(
        jobs,
        &PersistedState::default(),
        start,
        Config::default(),
        &mut fake,
    );
    walk(&mut sched, &mut fake, start, ts("2025-03-31T12:00:00Z"));
    let spring: Vec<Timestamp> = fake.starts().into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        spring,
        vec![
            ts("2025-03-29T01:30:00Z"), // 02:30 CET
            ts("2025-03-30T01:00:00Z"), // 02:30 does not exist: 03:00 CEST
            ts("2025-03-31T00:30:00Z"), // 02:30 CEST
        ]
    );
    let mut fake = Fake::finishing();
    let jobs = vec![entry(
        "nightly",
        "30 2 * * *",
        "Europe/Berlin",
        Missed::Skip,
    )];
    let start = ts("2025-10-25T12:00:00Z");
    let mut sched = Scheduler::new(
        jobs,
        &PersistedState::default(),
        start,
        Config::default(),
        &mut fake,
    );
    walk(&mut sched, &mut fake, start, ts("2025-10-27T12:00:00Z"));
    let autumn: Vec<Timestamp> = fake.starts().into_iter().map(|(_, t)| t).collect();
    // 26 October: 02:30 happens twice (CEST, then CET); the job runs once.
    assert_eq!(
        autumn,
        vec![ts("2025-10-26T00:30:00Z"), ts("2025-10-27T01:30:00Z")]
    );
}

#[test]
fn an_occurrence_during_a_run_is_skipped_and_recorded() {
    let mut fake = Fake::default();
    let jobs = vec![entry("slow", "*/10 * * * *", "UTC", Missed::Skip)];
    let t0 = ts("2025-06-02T10:00:00Z");
    let mut sched = Scheduler::new(
        jobs,
        &PersistedState::default(),
        t0,
        Config::default(),
        &mut fake,
    );
    sched.tick(t0, &mut fake);
    assert_eq!(fake.starts().len(), 1);
    // Still running at 10:10 and 10:20: not started again.
    sched.tick(ts("2025-06-02T10:10:00Z"), &mut fake);
    sched.tick(ts("2025-06-02T10:20:00Z"), &mut fake);
    assert_eq!(fake.starts().len(), 1);
    let skips: Vec<_> = sched
        .events()
        .filter(|e| e.kind == EventKind::SkippedOverlap)
        .collect();
    assert_eq!(skips.len(), 2, "{skips:?}");
    assert!(skips[0].message.contains("still going"), "{skips:?}");
    assert_eq!(skips[0].time, ts("2025-06-02T10:10:00Z"));
    // The skip is also in the saved state.
    let saved = sched.snapshot();
    assert!(
        saved
            .events
            .iter()
            .any(|e| e.kind == EventKind::SkippedOverlap)
    );
    assert!(saved.jobs["/jobs/slow.yaml"].running.is_some());
    // Once it ends, the next occurrence starts again.
    fake.finish(0, 1);
    sched.tick(ts("2025-06-02T10:25:00Z"), &mut fake);
    let last = sched.snapshot().jobs["/jobs/slow.yaml"].last_result.clone();
    let last = last.unwrap();
    assert_eq!((last.exit_code, last.status.as_str()), (Some(1), "failed"));
    sched.tick(ts("2025-06-02T10:30:00Z"), &mut fake);
    assert_eq!(fake.starts().len(), 2);
}

/// A scheduler that ran the job once, saved to `store`, then was down until `back`.
fn after_downtime(missed: Missed, store: &Store, back: Timestamp) -> (Scheduler, Fake) {
    let first = ts("2025-06-02T03:00:00Z"); // a Monday
    let mut fake = Fake::finishing();
    let job = || vec![entry("weekly", "0 3 * * 1", "UTC", missed)];
    let mut sched = Scheduler::new(
        job(),
        &store.load().unwrap(),
        first,
        Config::default(),
        &mut fake,
    );
    sched.tick(first, &mut fake);
    sched.tick(first + jiff::SignedDuration::from_secs(5), &mut fake);
    assert_eq!(fake.starts().len(), 1);
    store.save(&sched.snapshot()).unwrap();
    drop(sched);
    let mut fake = Fake::finishing();
    let mut sched = Scheduler::new(
        job(),
        &store.load().unwrap(),
        back,
        Config::default(),
        &mut fake,
    );
    sched.tick(back, &mut fake);
    (sched, fake)
}

#[test]
fn missed_runs_after_downtime_follow_the_policy() {
    // Down from Monday 2 June to Wednesday 18 June: the runs of 9 and 16 June were missed.
    let back = ts("2025-06-18T09:00:00Z");

    let tmp = tempfile::tempdir().unwrap();
    let (sched, fake) = after_downtime(Missed::Skip, &Store::new(tmp.path()), back);
    assert!(fake.starts().is_empty(), "skip must not run a missed run");
    let missed: Vec<_> = sched
        .events()
        .filter(|e| e.kind == EventKind::MissedSkipped)
        .collect();
    assert_eq!(missed.len(), 1);
    assert!(
        missed[0].message.starts_with("2 run(s) missed"),
        "{missed:?}"
    );
    assert_eq!(sched.next_due(), vec![Some(ts("2025-06-23T03:00:00Z"))]);

    let tmp = tempfile::tempdir().unwrap();
    let (sched, fake) = after_downtime(Missed::RunOnce, &Store::new(tmp.path()), back);
    assert_eq!(fake.starts(), vec![("weekly".to_owned(), back)]);
    assert!(kinds(&sched).contains(&EventKind::MissedRunOnce));
    assert_eq!(sched.next_due(), vec![Some(ts("2025-06-23T03:00:00Z"))]);

    // Back before the next occurrence: nothing was missed, nothing runs.
    let tmp = tempfile::tempdir().unwrap();
    let back_early = ts("2025-06-05T09:00:00Z");
    let (sched, fake) = after_downtime(Missed::RunOnce, &Store::new(tmp.path()), back_early);
    assert!(fake.starts().is_empty());
    assert!(!kinds(&sched).contains(&EventKind::MissedRunOnce));
}

#[test]
fn a_first_start_does_not_count_earlier_occurrences_as_missed() {
    let mut fake = Fake::finishing();
    let jobs = vec![entry("weekly", "0 3 * * 1", "UTC", Missed::RunOnce)];
    let now = ts("2025-06-04T12:00:00Z");
    let mut sched = Scheduler::new(
        jobs,
        &PersistedState::default(),
        now,
        Config::default(),
        &mut fake,
    );
    sched.tick(now, &mut fake);
    assert!(fake.starts().is_empty());
    assert_eq!(sched.next_due(), vec![Some(ts("2025-06-09T03:00:00Z"))]);
}

#[test]
fn a_stuck_run_gets_sigterm_then_sigkill() {
    let mut fake = Fake {
        ignore_term: true,
        ..Fake::default()
    };
    let mut job = entry("stuck", "0 * * * *", "UTC", Missed::Skip);
    job.timeout = Some(Duration::from_secs(600));
    let cfg = Config {
        reap_grace: Duration::from_secs(60),
        kill_after: Duration::from_secs(30),
        ..Config::default()
    };
    let t0 = ts("2025-06-02T10:00:00Z");
    let mut sched = Scheduler::new(vec![job], &PersistedState::default(), t0, cfg, &mut fake);
    sched.tick(t0, &mut fake);
    sched.tick(ts("2025-06-02T10:10:59Z"), &mut fake);
    assert!(
        !fake.run(0).lock().unwrap().terminated,
        "not before timeout + grace"
    );
    sched.tick(ts("2025-06-02T10:11:00Z"), &mut fake);
    assert!(fake.run(0).lock().unwrap().terminated);
    assert!(!fake.run(0).lock().unwrap().killed);
    sched.tick(ts("2025-06-02T10:11:30Z"), &mut fake);
    assert!(fake.run(0).lock().unwrap().killed);
    sched.tick(ts("2025-06-02T10:11:31Z"), &mut fake);
    let k = kinds(&sched);
    assert!(
        k.contains(&EventKind::Reaped) && k.contains(&EventKind::Killed),
        "{k:?}"
    );
    let last = sched.snapshot().jobs["/jobs/stuck.yaml"]
        .last_result
        .clone();
    assert_eq!(last.unwrap().status, "reaped");
    assert!(!sched.any_running());
    assert_eq!(sched.finished(), &[4]);
}

/// A stand-in for the cn-run binary: ignores its arguments and runs `script`.
pub(crate) fn fake_exe(dir: &std::path::Path, script: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let exe = dir.join("fake-cn-run");
    std::fs::write(&exe, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}

/// Tick with made-up times (one second per step) until no run is left, for real processes.
pub(crate) fn drain(
    sched: &mut Scheduler,
    launcher: &mut ProcessLauncher,
    mut now: Timestamp,
) -> Timestamp {
    for _ in 0..200 {
        sched.tick(now, launcher);
        if !sched.any_running() {
            return now;
        }
        std::thread::sleep(Duration::from_millis(20));
        now += jiff::SignedDuration::from_secs(1);
    }
    panic!("the run never ended");
}

#[test]
fn real_stuck_processes_are_reaped_by_process_group() {
    let tmp = tempfile::tempdir().unwrap();
    for (script, status_kinds) in [
        // Dies on SIGTERM (sleep is a child in the same group).
        ("sleep 30", vec![EventKind::Reaped]),
        // Ignores SIGTERM: only SIGKILL ends it.
        (
            "trap '' TERM\nwhile :; do sleep 0.05; done",
            vec![EventKind::Reaped, EventKind::Killed],
        ),
    ] {
        let mut launcher = ProcessLauncher {
            exe: fake_exe(tmp.path(), script),
            cwd: tmp.path().to_path_buf(),
            log_dir: tmp.path().join("logs"),
        };
        let mut job = entry("stuck", "* * * * *", "UTC", Missed::Skip);
        job.timeout = Some(Duration::ZERO);
        let cfg = Config {
            reap_grace: Duration::from_secs(1),
            kill_after: Duration::from_secs(2),
            ..Config::default()
        };
        let t0 = ts("2025-06-02T10:00:00Z");
        let mut sched = Scheduler::new(
            vec![job],
            &PersistedState::default(),
            t0,
            cfg,
            &mut launcher,
        );
        sched.tick(t0, &mut launcher);
        assert!(sched.any_running());
        sched.hold();
        drain(&mut sched, &mut launcher, t0);
        let k: Vec<EventKind> = kinds(&sched)
            .into_iter()
            .filter(|k| matches!(k, EventKind::Reaped | EventKind::Killed))
            .collect();
        assert_eq!(k, status_kinds, "{script}");
        let last = sched.snapshot().jobs["/jobs/stuck.yaml"]
            .last_result
            .clone();
        let last = last.unwrap();
        assert_eq!(last.status, "reaped", "{script}");
        assert!(last.log.unwrap().starts_with(tmp.path().join("logs")));
        // Nothing of the run is left: its process group is empty (the `sleep` included).
        let group = rustix::process::Pid::from_raw(last.pid.unwrap() as i32).unwrap();
        let started = std::time::Instant::now();
        while rustix::process::test_kill_process_group(group).is_ok()
            && started.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            rustix::process::test_kill_process_group(group).is_err(),
            "{script}: a process of the run is still alive"
        );
    }
}

/// A scheduler starts the job's run at 10:00 and goes (as a SIGKILL would leave it), its
/// run under way: what it saved, and the run's pid.
pub(crate) fn started_then_gone(
    launcher: &mut ProcessLauncher,
    jobs: Vec<Entry>,
) -> (PersistedState, u32) {
    let t0 = ts("2025-06-02T10:00:00Z");
    let cfg = Config::default();
    let mut first = Scheduler::new(jobs, &PersistedState::default(), t0, cfg, launcher);
    first.tick(t0, launcher);
    let saved = first.snapshot();
    let running = saved.jobs.values().find_map(|j| j.running.clone());
    let pid = running.and_then(|r| r.pid).expect("a run in flight");
    // The run is under way before its scheduler goes: a process still inside exec shows
    // an empty command line for a moment (seen with tests running in parallel).
    let started = std::time::Instant::now();
    while std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.is_empty())
        && started.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    (saved, pid)
}

#[test]
fn a_run_left_by_a_stopped_scheduler_is_watched_not_started_again() {
    let tmp = tempfile::tempdir().unwrap();
    let mut launcher = ProcessLauncher {
        exe: fake_exe(tmp.path(), "sleep 30"),
        cwd: tmp.path().to_path_buf(),
        log_dir: tmp.path().join("logs"),
    };
    let job = || vec![entry("long", "*/5 * * * *", "UTC", Missed::Skip)];
    let (saved, pid) = started_then_gone(&mut launcher, job());

    // A pid that is not a run of this job (here: the test itself) is not adopted.
    let mut foreign = saved.clone();
    foreign
        .jobs
        .get_mut("/jobs/long.yaml")
        .unwrap()
        .running
        .as_mut()
        .unwrap()
        .pid = Some(std::process::id());
    let t1 = ts("2025-06-02T10:05:00Z");
    let other = Scheduler::new(job(), &foreign, t1, Config::default(), &mut launcher);
    assert!(!other.any_running());

    let mut second = Scheduler::new(job(), &saved, t1, Config::default(), &mut launcher);
    assert!(kinds(&second).contains(&EventKind::Adopted));
    second.tick(t1, &mut launcher);
    assert!(
        kinds(&second).contains(&EventKind::SkippedOverlap),
        "no second run while it goes"
    );
    second.terminate_all(t1);
    drain(&mut second, &mut launcher, t1);
    let last = second.snapshot().jobs["/jobs/long.yaml"]
        .last_result
        .clone()
        .unwrap();
    assert_eq!((last.status.as_str(), last.pid), ("unknown", Some(pid)));
}

fn heartbeat(store: &Store) -> Value {
    serde_json::from_str(&std::fs::read_to_string(store.heartbeat_path()).unwrap()).unwrap()
}

#[tokio::test]
async fn the_loop_writes_a_heartbeat_and_stops_gracefully() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path());
    let clock = FakeClock::new(ts("2025-06-02T09:59:00Z"));
    let mut fake = Fake::default();
    let jobs = vec![entry("hourly", "0 * * * *", "UTC", Missed::Skip)];
    let mut sched = Scheduler::new(
        jobs,
        &PersistedState::default(),
        ts("2025-06-02T09:59:00Z"),
        Config::default(),
        &mut fake,
    );
    let (tx, rx) = tokio::sync::watch::channel(0u32);
    let probe = fake.clone();
    let c = clock.clone();
    let s = store.clone();
    let control = tokio::spawn(async move {
        // Idle: the loop wakes for the heartbeat (30 s) and for the occurrence at 10:00.
        let wake = c.next_sleep().await;
        assert_eq!(wake, ts("2025-06-02T09:59:30Z"));
        c.set(wake);
        let wake = c.next_sleep().await;
        assert_eq!(wake, ts("2025-06-02T10:00:00Z"));
        c.set(wake);
        let wake = c.next_sleep().await;
        assert_eq!(wake, ts("2025-06-02T10:00:01Z"), "polls the running run");
        let beat = heartbeat(&s);
        assert_eq!(probe.starts().len(), 1);
        tx.send(1).unwrap();
        beat
    });
    let opts = driver::Options {
        pid: 777,
        ..driver::Options::default()
    };
    let code = tokio::time::timeout(
        Duration::from_secs(20),
        driver::run(&mut sched, &clock, &mut fake, &store, rx, &opts),
    )
    .await
    .expect("the loop did not stop");
    let beat = control.await.unwrap();
    assert_eq!(code, 0);
    assert_eq!(beat["pid"], 777);
    assert_eq!(beat["status"], "running");
    assert_eq!(beat["time"], "2025-06-02T10:00:00Z");
    let job = &beat["jobs"][0];
    assert_eq!(job["name"], "hourly");
    assert_eq!(job["cron"], "0 * * * *");
    assert_eq!(job["running"]["scheduled_for"], "2025-06-02T10:00:00Z");
    assert_eq!(job["running"]["pid"], 4242);
    assert_eq!(
        job["next_runs"],
        serde_json::json!([
            "2025-06-02T11:00:00+00:00[UTC]",
            "2025-06-02T12:00:00+00:00[UTC]",
            "2025-06-02T13:00:00+00:00[UTC]"
        ])
    );
    assert_eq!(beat["events"][0]["kind"], "started");
    // The stop sent SIGTERM to the run, which ended with 130; the last heartbeat says so.
    assert!(fake.run(0).lock().unwrap().terminated);
    let end = heartbeat(&store);
    assert_eq!(end["status"], "stopped");
    assert_eq!(end["jobs"][0]["last_result"]["exit_code"], 130);
    assert_eq!(end["jobs"][0]["last_result"]["status"], "interrupted");
    let state = store.load().unwrap();
    assert_eq!(
        state.jobs["/jobs/hourly.yaml"].last_due,
        Some(ts("2025-06-02T10:00:00Z"))
    );
}

#[tokio::test]
async fn a_second_stop_request_kills_at_once_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path());
    let t0 = ts("2025-06-02T10:00:00Z");
    let clock = FakeClock::new(t0);
    let mut fake = Fake {
        ignore_term: true,
        ..Fake::default()
    };
    let jobs = vec![entry("hourly", "0 * * * *", "UTC", Missed::Skip)];
    let mut sched = Scheduler::new(
        jobs,
        &PersistedState::default(),
        ts("2025-06-02T09:59:59Z"),
        Config::default(),
        &mut fake,
    );
    let (tx, rx) = tokio::sync::watch::channel(0u32);
    let c = clock.clone();
    let control = tokio::spawn(async move {
        c.next_sleep().await;
        tx.send(1).unwrap();
        // Stopping: the run ignores SIGTERM, so the loop keeps polling.
        let wake = c.next_sleep().await;
        c.set(wake);
        c.next_sleep().await;
        tx.send(2).unwrap();
    });
    let opts = driver::Options::default();
    let code = tokio::time::timeout(
        Duration::from_secs(20),
        driver::run(&mut sched, &clock, &mut fake, &store, rx, &opts),
    )
    .await
    .expect("the loop did not stop");
    control.await.unwrap();
    assert_eq!(code, 130);
    let run = fake.run(0);
    let run = run.lock().unwrap();
    assert!(run.terminated && run.killed);
    assert_eq!(
        heartbeat(&store)["jobs"][0]["last_result"]["status"],
        "killed"
    );
}

const SCRIPT: &str = "turns:\n  - text: scheduled hello\n";

#[test]
fn schedule_once_runs_the_due_job_through_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            (
                "jobs/every.yaml",
                "version: 1\nname: every-minute\nmodel: {provider: script, name: s, script: scripts/s.yaml}\n\
                 prompt: say hello\nschedule: \"* * * * *\"\n",
            ),
            (
                "jobs/weekly.yaml",
                "version: 1\nname: weekly\nmodel: {provider: script, name: s, script: scripts/s.yaml}\n\
                 prompt: say hello\nschedule: {cron: \"0 3 * * 1\", timezone: Europe/Berlin, missed: run-once}\n",
            ),
            (
                "jobs/unscheduled.yaml",
                "version: 1\nname: manual\nprompt: x\n",
            ),
            ("jobs/scripts/s.yaml", SCRIPT),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["schedule", "--once", "jobs"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let state_dir = tmp.path().join("jobs/.cn-run/schedule");
    let beat: Value =
        serde_json::from_str(&std::fs::read_to_string(state_dir.join("heartbeat.json")).unwrap())
            .unwrap();
    assert_eq!(beat["status"], "stopped");
    let names: Vec<&str> = beat["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["every-minute", "weekly"]);
    let last = &beat["jobs"][0]["last_result"];
    assert_eq!(last["status"], "success", "{beat:#}");
    assert_eq!(last["exit_code"], 0);
    assert!(
        beat["jobs"][1]["last_result"].is_null(),
        "weekly is not due"
    );
    // The run's own stdout (the JSON result) is in its log; its files are under the cwd.
    let log = std::fs::read_to_string(last["log"].as_str().unwrap()).unwrap();
    assert!(log.contains("scheduled hello"), "{log}");
    assert!(tmp.path().join(".cn-run").is_dir());
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(state_dir.join("state.json")).unwrap())
            .unwrap();
    assert_eq!(state["jobs"].as_object().unwrap().len(), 2);

    let mut cmd = cn_run(tmp.path());
    cmd.args(["schedule", "--list", "--json", "--count", "2", "jobs"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let list: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(list[1]["name"], "weekly");
    assert_eq!(list[1]["timezone"], "Europe/Berlin");
    assert_eq!(list[1]["missed"], "run-once");
    let next = list[1]["next_runs"].as_array().unwrap();
    assert_eq!(next.len(), 2);
    assert!(
        next[0].as_str().unwrap().contains("T03:00:00+0"),
        "{next:?}"
    );
    assert_eq!(list[0]["last_result"]["status"], "success");
}

#[test]
fn a_bad_schedule_is_a_located_job_error() {
    let tmp = tempfile::tempdir().unwrap();
    let model = "model: {provider: script, name: s, script: s.yaml}\nprompt: x\n";
    write_files(
        tmp.path(),
        &[
            (
                "bad-cron.yaml",
                &format!("version: 1\n{model}schedule: \"61 * * * *\"\n"),
            ),
            (
                "bad-tz.yaml",
                &format!(
                    "version: 1\n{model}schedule:\n  cron: \"0 3 * * 1\"\n  timezone: Mars/Olympus\n"
                ),
            ),
            ("s.yaml", SCRIPT),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["schedule", "--list", "."]);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
    assert!(
        r.stderr
            .contains("bad-cron.yaml:4:11: schedule: `61 * * * *`"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("bad-tz.yaml:6:13: schedule.timezone: `Mars/Olympus`"),
        "{}",
        r.stderr
    );
    let job = load_str(
        &format!("version: 1\n{model}schedule: \"@daily\"\n"),
        "inline.yaml",
        Some(&tmp.path().join("inline.yaml")),
        &LoadOptions::default(),
    )
    .unwrap();
    let s = job.schedule.unwrap();
    assert_eq!(
        (s.cron.as_str(), s.timezone.as_str(), s.missed),
        ("0 0 * * *", "UTC", Missed::Skip)
    );
}

#[test]
fn sigterm_stops_the_foreground_scheduler_and_its_running_job() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            (
                "jobs/slow.yaml",
                "version: 1\nname: slow\nmodel: {provider: script, name: s, script: s.yaml}\n\
                 prompt: say hello\nchecks: [{name: wait, run: \"sleep 30\"}]\n\
                 schedule: \"* * * * *\"\n",
            ),
            ("jobs/s.yaml", SCRIPT),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["schedule", "jobs"]);
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let beat_path = tmp.path().join("jobs/.cn-run/schedule/heartbeat.json");
    // The occurrence of the current minute is on time, so the job starts at once.
    let mut running = Value::Null;
    for _ in 0..200 {
        if let Some(b) = std::fs::read_to_string(&beat_path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        {
            running = b["jobs"][0]["running"].clone();
            if running.is_object() {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(running.is_object(), "the job never started");
    // Wait until the run is in its check (its signal handling is set up by then).
    let in_check = || {
        let runs = std::fs::read_dir(tmp.path().join(".cn-run"))
            .into_iter()
            .flatten();
        runs.flatten().any(|e| {
            std::fs::read_to_string(e.path().join("events.jsonl"))
                .is_ok_and(|t| t.contains("assistant.message"))
        })
    };
    for _ in 0..200 {
        if in_check() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(in_check(), "the run never reached its check");
    let started = std::time::Instant::now();
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(20));
    let beat: Value = serde_json::from_str(&std::fs::read_to_string(&beat_path).unwrap()).unwrap();
    assert_eq!(beat["status"], "stopped");
    let last = &beat["jobs"][0]["last_result"];
    // The run got the SIGTERM: cn-run wrote its result and ended as interrupted.
    assert_eq!(last["status"], "interrupted", "{beat:#}");
    assert_eq!(last["exit_code"], 130);
}

/// A wrong flag or `schedule:` is the command line's or the job's fault: exit 2 (the README's
/// table), the flag or field named with the value, and no run started (no run folder).
#[test]
fn a_bad_schedule_flag_or_line_is_exit_2_naming_it() {
    let model = "model: {provider: script, name: s, script: s.yaml}\nprompt: x\n";
    let every = format!("version: 1\n{model}schedule: \"* * * * *\"\n");
    // (the job's schedule line, the flags, the words on stderr)
    let cases: [(String, &[&str], &str); 7] = [
        (
            every.clone(),
            &["--default-timeout", "soon"],
            "--default-timeout: `soon` is not a duration",
        ),
        (
            every.clone(),
            &["--reap-grace=-5m"],
            "--reap-grace: `-5m` is negative",
        ),
        (
            every,
            &["--stop-timeout", "1x"],
            "--stop-timeout: `1x` is not a duration",
        ),
        (
            format!("version: 1\n{model}schedule: \"@reboot\"\n"),
            &[],
            "schedule: `@reboot` runs when cron starts; `cn-run schedule` has no such moment",
        ),
        (
            format!("version: 1\n{model}schedule: \"1 2 3\"\n"),
            &[],
            "schedule: `1 2 3` has 3 fields; a cron line has 5",
        ),
        (
            format!("version: 1\n{model}schedule: {{cron: \"0 3 * * *\", timezone: Moon/Base}}\n"),
            &[],
            "schedule.timezone: `Moon/Base` is not a known IANA time zone (e.g. UTC, Europe/Berlin)",
        ),
        (
            format!("version: 1\n{model}schedule: \"0 25 * * *\"\n"),
            &[],
            "schedule: `0 25 * * *` is not a valid cron line",
        ),
    ];
    for (job, flags, words) in cases {
        let tmp = tempfile::tempdir().unwrap();
        write_files(
            tmp.path(),
            &[("jobs/j.yaml", &job), ("jobs/s.yaml", SCRIPT)],
        );
        let mut cmd = cn_run(tmp.path());
        cmd.args(["schedule", "--once"]).args(flags).arg("jobs");
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "{flags:?}: {r:#?}");
        assert!(r.stderr.contains(words), "{flags:?}: {}", r.stderr);
        assert!(
            !tmp.path().join(".cn-run").exists(),
            "{flags:?}: a run started"
        );
    }
}

/// Every `ScheduleError` has its class, and so its exit code, from the one table: the
/// command line's are 2, the environment's 6. The `match` fails to compile when a variant
/// is added, so a new one cannot be left out of this walk.
#[test]
fn each_scheduler_error_has_the_exit_code_of_its_class() {
    let io = |kind| std::io::Error::new(kind, "x");
    let value = cn_run::job::parse_duration("soon").unwrap_err();
    let cases = [
        (ScheduleError::Jobs("a.yaml:1:1: bad".into()), 2),
        (
            ScheduleError::Flag {
                flag: "--reap-grace",
                source: value,
            },
            2,
        ),
        (
            ScheduleError::Busy {
                pid: 7,
                dir: "/s".into(),
            },
            2,
        ),
        (
            ScheduleError::Io {
                what: "read",
                path: "/jobs".into(),
                source: io(std::io::ErrorKind::NotFound),
            },
            2,
        ),
        (
            ScheduleError::Io {
                what: "write",
                path: "/s/state.json".into(),
                source: io(std::io::ErrorKind::PermissionDenied),
            },
            6,
        ),
        (
            ScheduleError::State {
                path: "/s/state.json".into(),
                message: "expected value".into(),
            },
            6,
        ),
        (
            ScheduleError::Start {
                what: "create",
                path: "/s/logs/j".into(),
                source: io(std::io::ErrorKind::StorageFull),
            },
            6,
        ),
    ];
    for (e, code) in &cases {
        match e {
            ScheduleError::Jobs(_)
            | ScheduleError::Flag { .. }
            | ScheduleError::Busy { .. }
            | ScheduleError::Io { .. }
            | ScheduleError::State { .. }
            | ScheduleError::Start { .. } => {}
        }
        assert_eq!(e.status().exit_code(), *code, "{e}");
    }
}

/// The scheduler's own state that cannot be read is the environment: exit 6, the file
/// named, nothing started and the file left as it was; a folder named that is not there is
/// the command line's: exit 2.
#[test]
fn unreadable_scheduler_state_is_exit_6_and_a_missing_folder_exit_2() {
    let job = "version: 1\nmodel: {provider: script, name: s, script: s.yaml}\nprompt: x\n\
               schedule: \"* * * * *\"\n";
    // (what state.json is, or None for a state folder that is a file; the words)
    let cases: [(Option<&str>, &str); 5] = [
        (Some("not json"), "state.json is not a scheduler state file"),
        (Some("[1, 2]"), "state.json is not a scheduler state file"),
        (
            Some("{\"jobs\": 3}"),
            "state.json is not a scheduler state file",
        ),
        (Some(""), "move it away to start afresh"),
        (None, "cannot read"),
    ];
    for (state, words) in cases {
        let tmp = tempfile::tempdir().unwrap();
        write_files(tmp.path(), &[("jobs/j.yaml", job), ("jobs/s.yaml", SCRIPT)]);
        let dir = tmp.path().join("state");
        match state {
            Some(text) => write_files(&dir, &[("state.json", text)]),
            None => std::fs::write(&dir, "a file, not a folder").unwrap(),
        }
        let mut cmd = cn_run(tmp.path());
        cmd.args(["schedule", "--once", "--state-dir", "state", "jobs"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 6, "{state:?}: {r:#?}");
        assert!(r.stderr.contains(words), "{state:?}: {}", r.stderr);
        assert!(
            !tmp.path().join(".cn-run").exists(),
            "{state:?}: a run started"
        );
        if let Some(text) = state {
            assert_eq!(
                std::fs::read_to_string(dir.join("state.json")).unwrap(),
                text
            );
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = cn_run(tmp.path());
    cmd.args(["schedule", "--once", "no-such-folder/"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
}
