//! A CI runner's cancel reaches every phase after the agent: GitHub sends SIGINT, then
//! SIGTERM 7.5 s later, then SIGKILL 2.5 s after that. A signal during the checks, the
//! artifact upload or the final session upload (a server that never answers: they are
//! capped at 60 s and 30 s) ends the run with exit 130 and result.json saying what it
//! was doing, long before those caps — and before SIGKILL would come. The bounds below
//! are far from both (the run takes about 2 s after the signal; the caps are 30 s and
//! more), so load does not decide them.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::live::Live;
use crate::support::procs;
use crate::support::runner::{Run, cn_run, write_files};

/// Well under the caps the signal cuts short (30 s final upload, 60 s artifacts).
const BOUND: Duration = Duration::from_secs(20);

fn result_of(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap()
}

/// Starts `job` in `dir`, waits for `ready`, sends `signals` (the first at once, each
/// next a little later, as GitHub does), and waits for the end; the run and how long the
/// end took after the first signal.
async fn signalled(
    dir: &Path,
    job: String,
    ready: impl Fn() -> bool + Send + 'static,
    signals: &'static [&'static str],
) -> (Run, Duration) {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        write_files(&dir, &[("job.yaml", &job)]);
        let out = dir.join("out");
        let mut cmd = cn_run(&dir);
        cmd.args(["job.yaml", "--out", "out"]);
        let live = Live::start(cmd, &dir, Some(&out));
        assert!(
            procs::wait_for(ready),
            "never got there: {}",
            live.stderr_so_far()
        );
        let sent = Instant::now();
        for (i, signal) in signals.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(Duration::from_millis(300));
            }
            live.signal(signal);
        }
        let r = live.wait();
        (r, sent.elapsed())
    })
    .await
    .unwrap()
}

/// result.json's upload status `field` says the signal cut it.
fn assert_cut(result: &Value, field: &str) {
    let status = &result[field];
    assert_eq!(status["ok"], false, "{result}");
    let error = status["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("interrupted by a signal"), "{result}");
}

fn holds(r: &RecordedRequest, text: &str) -> bool {
    String::from_utf8_lossy(&r.body).contains(text)
}

const ANSWER: &str = "turns:\n  - text: done\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_signal_during_the_final_session_upload_ends_it_and_result_json_says_so() {
    for signals in [&["TERM"][..], &["INT"], &["INT", "TERM"]] {
        // The final upload (the log with its `finished` line) never gets an answer.
        let server = MockServer::start_with(|r| {
            if holds(r, "\"type\":\"finished\"") {
                Reply::text(200, "text/plain", "ok").hang()
            } else {
                Reply::text(200, "text/plain", "ok")
            }
        })
        .await;
        let tmp = tempfile::tempdir().unwrap();
        write_files(tmp.path(), &[("s.yaml", ANSWER)]);
        let job = format!(
            "version: 1\nname: up\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: go\nupload: {{url: \"{}/s/{{run_id}}\", interval: 1h}}\n",
            server.url()
        );
        let requests = server.clone_requests();
        let ready = move || requests().iter().any(|r| holds(r, "\"type\":\"finished\""));
        let (r, took) = signalled(tmp.path(), job, ready, signals).await;
        assert_eq!(r.code, 130, "{signals:?}: {r:#?}");
        assert!(took < BOUND, "{signals:?}: {took:?}");
        let result = result_of(&tmp.path().join("out"));
        assert_eq!(result["status"], "interrupted", "{result}");
        assert!(
            result["reason"]
                .as_str()
                .unwrap()
                .contains("while uploading the session"),
            "{result}"
        );
        assert_cut(&result, "upload");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signal_during_the_artifact_upload_ends_it() {
    for signals in [&["TERM"][..], &["INT", "TERM"]] {
        let server = MockServer::start_with(|r| {
            if r.path.contains("/artifacts/") {
                Reply::text(200, "text/plain", "ok").hang()
            } else {
                Reply::text(200, "text/plain", "ok")
            }
        })
        .await;
        let tmp = tempfile::tempdir().unwrap();
        write_files(
            tmp.path(),
            &[("s.yaml", ANSWER), ("report.txt", "all good\n")],
        );
        let job = format!(
            "version: 1\nname: art\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: go\nartifacts: [report.txt]\nupload: {{url: \"{0}/s/{{run_id}}\", artifacts_url: \"{0}/b/{{run_id}}/artifacts/{{path}}\", interval: 1h}}\n",
            server.url()
        );
        let requests = server.clone_requests();
        let ready = move || requests().iter().any(|r| r.path.contains("/artifacts/"));
        let (r, took) = signalled(tmp.path(), job, ready, signals).await;
        assert_eq!(r.code, 130, "{signals:?}: {r:#?}");
        assert!(took < BOUND, "{signals:?}: {took:?}");
        let result = result_of(&tmp.path().join("out"));
        assert_eq!(result["status"], "interrupted", "{result}");
        assert_cut(&result, "artifacts_upload");
        // The artifact itself was collected before the upload.
        assert_eq!(result["artifacts"][0]["path"], "report.txt", "{result}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signal_during_the_checks_ends_them_and_starts_no_other() {
    for signals in [&["TERM"][..], &["INT"]] {
        let tmp = tempfile::tempdir().unwrap();
        write_files(tmp.path(), &[("s.yaml", ANSWER)]);
        let job = "version: 1\nname: chk\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\nchecks:\n  - {name: slow, run: 'sleep 37'}\n  - {name: after, run: 'echo ran > after.txt'}\n".to_owned();
        let ws = tmp.path().to_path_buf();
        let ready = move || procs::in_dir(&ws).iter().any(|p| p.cmdline == "sleep 37");
        let (r, took) = signalled(tmp.path(), job, ready, signals).await;
        assert_eq!(r.code, 130, "{signals:?}: {r:#?}");
        assert!(took < BOUND, "{signals:?}: {took:?}");
        let result = result_of(&tmp.path().join("out"));
        assert_eq!(result["status"], "interrupted", "{result}");
        let checks = result["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 2, "{result}");
        assert!(
            checks
                .iter()
                .all(|c| c["interrupted"] == true && c["passed"] == false),
            "{result}"
        );
        assert!(
            !tmp.path().join("after.txt").exists(),
            "no check starts after the signal"
        );
        let left = procs::in_dir(tmp.path());
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}
