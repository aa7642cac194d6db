//! Session upload against local HTTP servers: uploads right away, on the interval and at
//! the end; planted secrets masked in session and diff bodies; the SSE header a presigned
//! URL asks for; retries; and a failing, refusing or silent server that leaves `ok: false`
//! without holding the caller past the cap or leaking the URL's query string.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cn_run::redact::{MASK, Redactor};
use cn_run::upload::{UploadBody, UploadPolicy, UploadStatus, UploadTarget, Uploader};

use crate::support::http::{MockServer, RecordedRequest, Reply};

const SECRET: &str = "sk-planted-7f3a9c";
const TOKEN: &str = "ghp_planted_token_42";
const QUERY_SECRET: &str = "sigQUERY0123456789";

fn redactor() -> Redactor {
    let env = vec![("GITHUB_TOKEN".to_owned(), TOKEN.to_owned())];
    Redactor::new([SECRET], env, &[])
}

fn fast() -> UploadPolicy {
    UploadPolicy {
        initial_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(40),
        ..UploadPolicy::default()
    }
}

/// A run folder with session.jsonl (as if a bug had left secrets in it) and diff.patch.
fn run_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_session(dir.path(), "running");
    let diff = format!(
        "diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -0,0 +1 @@\n+API_KEY={SECRET}\n+TOKEN={TOKEN}\n"
    );
    std::fs::write(dir.path().join("diff.patch"), diff).unwrap();
    dir
}

/// The session log: a meta line and a message on "running"; a `finished` line appended
/// on "finished" (the log only grows, as a run's does).
fn write_session(dir: &Path, state: &str) {
    let lines = match state {
        "running" => vec![
            serde_json::json!({"type": "meta", "schema_version": 2, "session_id": "r-up"}),
            serde_json::json!({"type": "message", "message": {"role": "user", "content": format!("use {SECRET} and {TOKEN}")}}),
        ],
        _ => vec![serde_json::json!({"type": "finished", "status": "success"})],
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("session.jsonl"))
        .unwrap();
    for l in lines {
        std::io::Write::write_all(&mut file, format!("{l}\n").as_bytes()).unwrap();
    }
}

/// The lines of an uploaded session log.
fn log_lines(r: &RecordedRequest) -> Vec<serde_json::Value> {
    body_text(r)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What the run gives the uploader: the files as they are on disk now.
fn snapshot_of(dir: PathBuf) -> impl Fn() -> Option<UploadBody> + Send + Sync + 'static {
    move || {
        Some(UploadBody {
            session: std::fs::read(dir.join("session.jsonl")).ok()?,
            diff: std::fs::read(dir.join("diff.patch")).ok(),
        })
    }
}

fn ok_server_reply(_: &RecordedRequest) -> Reply {
    Reply::text(200, "text/plain", "")
}

fn body_text(r: &RecordedRequest) -> String {
    String::from_utf8(r.body.clone()).unwrap()
}

fn assert_masked(r: &RecordedRequest) {
    let text = body_text(r);
    assert!(!text.contains(SECRET) && !text.contains(TOKEN), "{text}");
    assert!(text.contains(MASK), "{text}");
}

#[tokio::test]
async fn uploads_at_once_on_the_interval_and_at_the_end_with_secrets_masked() {
    let server = MockServer::start_with(ok_server_reply).await;
    let dir = run_folder();
    let target = UploadTarget::new(
        &format!("{}/sessions/{{run_id}}.json", server.url()),
        Some(&format!("{}/diffs/{{run_id}}.patch", server.url())),
        "r-up",
    )
    .unwrap();
    let seen = Arc::new(Mutex::new(Vec::<UploadStatus>::new()));
    let seen_in = Arc::clone(&seen);
    let handle = Uploader::new(target, redactor(), fast()).unwrap().spawn(
        Duration::from_millis(50),
        snapshot_of(dir.path().to_path_buf()),
        move |s| seen_in.lock().unwrap().push(s),
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let before_finish = server.requests().len();
    write_session(dir.path(), "finished");
    let status = handle.finish(None).await;

    let requests = server.requests();
    let sessions: Vec<_> = requests
        .iter()
        .filter(|r| r.path == "/sessions/r-up.json")
        .collect();
    let diffs: Vec<_> = requests
        .iter()
        .filter(|r| r.path == "/diffs/r-up.patch")
        .collect();
    // The immediate upload plus at least two interval ones, then the final one.
    assert!(
        before_finish >= 6,
        "only {before_finish} PUTs before the end"
    );
    assert_eq!(
        sessions.len() + diffs.len(),
        requests.len(),
        "{requests:#?}"
    );
    assert_eq!(sessions.len(), diffs.len());
    for r in &requests {
        assert_eq!(r.method, "PUT");
        assert_masked(r);
        assert_eq!(r.header("x-amz-server-side-encryption"), None);
    }
    for r in &sessions {
        assert_eq!(r.header("content-type"), Some("application/x-ndjson"));
        assert_eq!(log_lines(r)[0]["session_id"], "r-up", "{}", body_text(r));
    }
    for r in &diffs {
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert!(body_text(r).contains(&format!("+API_KEY={MASK}")));
    }
    let last_type = |r: &&RecordedRequest| log_lines(r).last().unwrap()["type"].clone();
    assert_eq!(last_type(sessions.first().unwrap()), "message");
    assert_eq!(last_type(sessions.last().unwrap()), "finished");

    assert!(status.ok, "{status:?}");
    assert_eq!(status.uploads as usize, requests.len());
    assert_eq!(status.failures, 0);
    assert_eq!(status.last_status, Some(200));
    assert!(status.last_at.is_some());
    let interval_results = seen.lock().unwrap().clone();
    assert!(interval_results.len() >= 3, "{interval_results:?}");
    assert!(interval_results.iter().all(|s| s.ok));
}

#[tokio::test]
async fn a_failing_server_gives_ok_false_after_retries_without_leaking_the_query() {
    let logs = LogCapture::default();
    // tracing caches per call site whether anyone listens, computed on the first thread
    // to reach it; with a single registered dispatcher a sibling test's thread (no
    // subscriber) would cache "never". A second, idle dispatcher makes the cache consult
    // every live dispatcher, this capture included.
    let _anchor = tracing::Dispatch::new(tracing_subscriber::registry());
    let _guard = tracing::subscriber::set_default(logs.subscriber());
    tracing::callsite::rebuild_interest_cache();
    let server = MockServer::start_with(|_| Reply::text(503, "text/plain", "down")).await;
    let dir = run_folder();
    let query = format!("X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature={QUERY_SECRET}");
    let target = UploadTarget::new(
        &format!("{}/s.json?{query}", server.url()),
        Some(&format!("{}/d.patch?{query}", server.url())),
        "r-fail",
    )
    .unwrap();
    let handle = Uploader::new(target, redactor(), fast()).unwrap().spawn(
        Duration::from_secs(3600),
        snapshot_of(dir.path().to_path_buf()),
        |_| {},
    );
    let status = handle.finish(None).await;

    assert!(!status.ok, "{status:?}");
    assert_eq!(status.uploads, 0);
    // The immediate upload may or may not have ended before finish stopped it.
    assert!(status.failures >= 2, "{status:?}");
    assert_eq!(status.last_status, Some(503));
    let error = status.last_error.clone().unwrap();
    assert!(
        error.contains("503") && error.contains("/d.patch"),
        "{error}"
    );
    // Three tries for each of the final PUTs (session and diff).
    let requests = server.requests();
    let final_puts = requests
        .iter()
        .filter(|r| r.path.starts_with("/d.patch"))
        .count();
    assert!(final_puts >= 3, "{requests:#?}");
    for r in &requests {
        assert_masked(r);
    }
    let log = logs.text();
    assert!(log.contains("upload failed"), "{log}");
    for text in [&error, &log, &format!("{status:?}")] {
        assert!(!text.contains(QUERY_SECRET), "{text}");
        assert!(!text.contains("AKIAEXAMPLE"), "{text}");
    }
}

#[tokio::test]
async fn a_refusal_is_not_retried_and_a_5xx_then_success_is() {
    let server = MockServer::start(vec![
        Reply::text(
            403,
            "application/xml",
            "<Error><Code>AccessDenied</Code><Key>X-Amz-Signature=zzz</Key></Error>",
        ),
        Reply::text(503, "text/plain", "busy").with_header("retry-after", "0"),
        Reply::text(200, "text/plain", ""),
    ])
    .await;
    let target = UploadTarget::new(&format!("{}/s.json", server.url()), None, "r").unwrap();
    let uploader = Uploader::new(target, redactor(), fast()).unwrap();
    let body = UploadBody {
        session: br#"{"a":1}"#.to_vec(),
        diff: Some(b"ignored: no diff URL".to_vec()),
    };
    let first = uploader.upload(&body, None).await;
    assert!(!first.ok);
    assert_eq!(first.last_status, Some(403));
    let error = first.last_error.clone().unwrap();
    assert!(
        error.contains("AccessDenied") && !error.contains("zzz"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1, "a 403 must not be retried");

    let second = uploader.upload(&body, None).await;
    assert!(second.ok, "{second:?}");
    assert_eq!((second.uploads, second.failures), (1, 1));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_silent_server_cannot_hold_the_end_past_the_cap() {
    // Accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let target = UploadTarget::new(&format!("http://{addr}/s.json?sig=x"), None, "r").unwrap();
    let policy = UploadPolicy {
        final_cap: Duration::from_millis(600),
        ..fast()
    };
    let handle = Uploader::new(target, redactor(), policy).unwrap().spawn(
        Duration::from_secs(3600),
        || Some(UploadBody::default()),
        |_| {},
    );
    let started = Instant::now();
    let status = handle.finish(None).await;
    let took = started.elapsed();
    held.abort();
    // The final upload tried until its cap, and the cap bound it: the server holds every
    // connection open for ever, so only the cap ends the wait (a bound far above 600 ms).
    assert!(took >= Duration::from_millis(500), "{took:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(!status.ok);
    assert!(status.failures >= 1);
    let error = status.last_error.unwrap();
    assert!(
        error.contains("timed out") || error.contains("within"),
        "{error}"
    );
    assert!(!error.contains("sig=x"), "{error}");
}

#[tokio::test]
async fn the_sse_header_is_sent_only_where_the_url_signed_it() {
    let server = MockServer::start_with(ok_server_reply).await;
    let signed = "X-Amz-SignedHeaders=host%3Bx-amz-server-side-encryption&X-Amz-Signature=1";
    let target = UploadTarget::new(
        &format!("{}/s.json?{signed}", server.url()),
        Some(&format!(
            "{}/d.patch?X-Amz-SignedHeaders=host",
            server.url()
        )),
        "r",
    )
    .unwrap();
    let uploader = Uploader::new(target, Redactor::none(), fast()).unwrap();
    let body = UploadBody {
        session: b"{}".to_vec(),
        diff: Some(Vec::new()),
    };
    assert!(uploader.upload(&body, None).await.ok);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let by_path = |p: &str| requests.iter().find(|r| r.path.starts_with(p)).unwrap();
    assert_eq!(
        by_path("/s.json").header("x-amz-server-side-encryption"),
        Some("AES256")
    );
    assert_eq!(
        by_path("/d.patch").header("x-amz-server-side-encryption"),
        None
    );
    assert!(by_path("/d.patch").body.is_empty());
}

#[tokio::test]
async fn a_body_that_keeps_a_secret_after_masking_is_never_sent() {
    let server = MockServer::start_with(ok_server_reply).await;
    // A secret the mask itself contains: masking cannot remove it.
    let redactor = Redactor::new(["REDACTED"], Vec::new(), &[]);
    let target = UploadTarget::new(&format!("{}/s.json", server.url()), None, "r").unwrap();
    let uploader = Uploader::new(target, redactor, fast()).unwrap();
    let body = UploadBody {
        session: br#"{"note":"REDACTED"}"#.to_vec(),
        diff: None,
    };
    let status = uploader.upload(&body, None).await;
    assert!(!status.ok);
    assert_eq!(status.failures, 1);
    assert!(status.last_error.unwrap().contains("secret"));
    assert!(server.requests().is_empty());
}

/// Collects formatted log lines from the current thread.
#[derive(Clone, Default)]
struct LogCapture(Arc<Mutex<Vec<u8>>>);

impl LogCapture {
    fn subscriber(&self) -> impl tracing::Subscriber + Send + Sync {
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(self.clone())
            .finish()
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogCapture {
    type Writer = LogCapture;

    fn make_writer(&'a self) -> LogCapture {
        self.clone()
    }
}

/// Through the binary: a run uploads its redacted session while it goes and at the end,
/// and a failing upload server does not fail the run.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_uploads_its_session_and_survives_a_failing_server() {
    use crate::support::http::{MockServer, Reply};
    use crate::support::runner::{cn_run, run, write_files};
    for failing in [false, true] {
        let server = MockServer::start_with(move |_| {
            if failing {
                Reply::json(503, &serde_json::json!({}))
            } else {
                Reply::json(200, &serde_json::json!({}))
            }
        })
        .await;
        let tmp = tempfile::tempdir().unwrap();
        let job = "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\nupload: {url_env: UPLOAD_URL, interval: 1s}\npermissions: {allow: ['Bash(echo *)']}\n";
        let script = "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo $DEPLOY_TOKEN'}}]\n  - text: done\n";
        write_files(tmp.path(), &[("job.yaml", job), ("s.yaml", script)]);
        let (dir, url) = (
            tmp.path().to_path_buf(),
            format!(
                "{}/bucket/{{run_id}}/session.json?X-Amz-Signature=sig123secret",
                server.url()
            ),
        );
        let r = tokio::task::spawn_blocking(move || {
            let mut cmd = cn_run(&dir);
            cmd.arg("job.yaml")
                .env("UPLOAD_URL", &url)
                .env("DEPLOY_TOKEN", "tok_planted_value_987");
            run(cmd, Some(&dir.join("out")))
        })
        .await
        .unwrap();
        assert_eq!(r.code, 0, "{r:#?}");
        let puts: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|q| q.method == "PUT")
            .collect();
        // At least the final upload (the one at the start may still be in flight when a
        // fast run ends; interval uploads are covered by the tests above).
        assert!(!puts.is_empty(), "no upload");
        assert!(puts.iter().all(|q| q.path.starts_with("/bucket/")));
        for q in &puts {
            let body = String::from_utf8_lossy(&q.body);
            assert!(
                !body.contains("tok_planted_value_987"),
                "a secret was uploaded"
            );
        }
        let last = String::from_utf8_lossy(&puts.last().unwrap().body).into_owned();
        let end: serde_json::Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
        assert_eq!(end["type"], "finished", "{last}");
        let status = &r.result()["upload"];
        assert_eq!(status["ok"], !failing, "{status}");
        let all = r.result().to_string()
            + &std::fs::read_to_string(tmp.path().join("out/events.jsonl")).unwrap()
            + &r.stderr;
        assert!(
            !all.contains("sig123secret"),
            "the presigned URL's signature leaked"
        );
    }
}

/// Artifacts go to `upload.artifacts_url` at the end, masked like everything else.
#[tokio::test(flavor = "multi_thread")]
async fn artifacts_are_uploaded_with_the_session() {
    use crate::support::http::{MockServer, Reply};
    use crate::support::runner::{cn_run, run, write_files};
    let server = MockServer::start_with(|_| Reply::json(200, &serde_json::json!({}))).await;
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: go\nartifacts: [\"reports/*.txt\"]\nupload: {{url: \"{0}/b/{{run_id}}/session.json\", artifacts_url: \"{0}/b/{{run_id}}/artifacts/{{path}}\"}}\npermissions: {{mode: auto}}\ntools: {{bash: {{env: [DEPLOY_TOKEN]}}}}\n",
        server.url()
    );
    let script = "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'mkdir -p reports && echo \"token $DEPLOY_TOKEN\" > \"reports/run log.txt\"'}}]\n  - text: done\n";
    write_files(tmp.path(), &[("job.yaml", &job), ("s.yaml", script)]);
    let dir = tmp.path().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml")
            .env("DEPLOY_TOKEN", "tok_artifact_secret_42");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{r:#?}");
    let put = server
        .requests()
        .into_iter()
        .find(|q| q.path.contains("/artifacts/"))
        .expect("an artifact upload");
    assert!(
        put.path.ends_with("/artifacts/reports/run%20log.txt"),
        "{}",
        put.path
    );
    let body = String::from_utf8_lossy(&put.body).into_owned();
    assert_eq!(body, "token [REDACTED]\n");
    assert_eq!(r.result()["artifacts_upload"]["ok"], true);
}
