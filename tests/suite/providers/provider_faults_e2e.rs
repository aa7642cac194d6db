//! The binary against the recorded refusals of real servers (`tests/fixtures/servers/*/*.http`,
//! each naming its source): a full context window in every named server's words compacts and
//! asks again; a wait longer than the run affords ends the run at once (exit 5) saying when to
//! retry, a short one is waited as the server named it and the event carries the figure; a
//! prompt the content filter refuses ends like a filtered answer (exit 1); a web page sent as
//! an event stream ends with its words. result.json is written in every case.

use std::time::{Duration, Instant};

use crate::support::http::{MockServer, Reply};
use crate::support::replay::{fixture, http_fixture, http_fixtures, run_replayed};

const QUICK: &str = "  retry: {max_retries: 3, initial_delay: 10ms}\n";

/// The summary and final answers of `server` (its recorded text stream).
fn answer(server: &str) -> Reply {
    fixture(server, "text.sse").reply()
}

/// Each server's overflow refusal leads to a compaction and one more request, which succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_window_in_any_servers_words_compacts_and_asks_again() {
    let overflows: Vec<(String, String)> = http_fixtures()
        .into_iter()
        .filter(|(_, f)| f.starts_with("error_overflow"))
        .collect();
    assert!(overflows.len() >= 12, "{overflows:?}");
    for (server, file) in overflows {
        let refusal = http_fixture(&server, &file);
        let mock = MockServer::start(vec![
            refusal.reply(),
            answer(&server), // the summary
            answer(&server), // the answer after the compaction
            answer(&server), // after the one "continue" a model gets when it stops right away
        ])
        .await;
        let (r, _tmp) = run_replayed(&server, &mock.url(), "Say hello.", QUICK).await;
        assert_eq!(r.code, 0, "{server}/{file}: {}", r.stderr);
        assert_eq!(r.events_of("compaction").len(), 1, "{server}/{file}");
        assert!(r.events_of("model.retry").is_empty(), "{server}/{file}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 4, "{server}/{file}");
    }
}

/// GitHub Models' daily cap (`retry-after: 5631`): one request, exit 5 at once, the server's
/// words, the wait and when to retry in result.json — not ten retries two minutes apart.
#[tokio::test(flavor = "multi_thread")]
async fn a_daily_cap_ends_the_run_at_once_saying_when_to_retry() {
    let cap = http_fixture("github_models", "error_daily.http");
    let mock = MockServer::start(vec![cap.reply(), cap.reply(), cap.reply()]).await;
    let started = Instant::now();
    let (r, _tmp) = run_replayed("github_models", &mock.url(), "Say hello.", QUICK).await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(r.code, 5, "{}", r.stderr);
    assert_eq!(mock.requests().len(), 1);
    assert!(r.events_of("model.retry").is_empty());
    let result = r.result();
    assert_eq!(result["status"], "provider_error");
    let reason = result["reason"].as_str().unwrap();
    for words in [
        "Rate limit of 50 per 86400s exceeded for UserByModelByDay",
        "1 h 33 min 51 s",
        "retry after 20",
    ] {
        assert!(reason.contains(words), "{words:?} not in {reason}");
    }
}

/// A wait longer than what is left of the run's time limit ends it too, before the limit.
#[tokio::test(flavor = "multi_thread")]
async fn a_wait_past_the_runs_time_limit_ends_the_run_at_once() {
    let limited = http_fixture("anthropic", "error_rate_limit.http")
        .reply()
        .with_header("retry-after", "40");
    let mock = MockServer::start(vec![limited]).await;
    let started = Instant::now();
    let limit = format!("{QUICK}limits: {{timeout: 20s}}\n");
    let (r, _tmp) = run_replayed("anthropic", &mock.url(), "Say hello.", &limit).await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(r.code, 5, "{}", r.stderr);
    let reason = r.result()["reason"].as_str().unwrap().to_owned();
    assert!(
        reason.contains("wait 40 s") && reason.contains("retry after"),
        "{reason}"
    );
}

/// Gemini's per-minute limit is a wait, not an exhausted quota: the run waits the server's
/// `RetryInfo` delay, says so in the event, and goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_per_minute_limit_is_waited_as_the_server_names_it_and_the_run_goes_on() {
    for (server, file, wait_ms) in [
        ("gemini", "error_rate_minute.http", 1000),
        ("openai", "error_rate_limit.http", 210),
        ("groq", "error_rate_limit.http", 1000),
    ] {
        let limited = http_fixture(server, file);
        let mock = MockServer::start(vec![limited.reply(), answer(server)]).await;
        let (r, _tmp) = run_replayed(server, &mock.url(), "Say hello.", QUICK).await;
        assert_eq!(r.code, 0, "{server}: {}", r.stderr);
        let retries = r.events_of("model.retry");
        assert_eq!(retries.len(), 1, "{server}");
        assert_eq!(retries[0]["error_kind"], "rate_limited", "{server}");
        assert_eq!(retries[0]["retry_after_ms"], wait_ms, "{server}");
        assert_eq!(retries[0]["delay_ms"], wait_ms, "{server}");
    }
}

/// Azure's prompt filter (400 `content_filter`): one request, exit 1 as for a filtered answer,
/// naming the filter — not exit 5 inviting a re-run that is refused again.
#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_refused_by_the_content_filter_ends_like_a_filtered_answer() {
    let refusal = http_fixture("azure", "error_content_filter.http");
    let mock = MockServer::start(vec![refusal.reply(), refusal.reply()]).await;
    let (r, _tmp) = run_replayed("azure", &mock.url(), "Say hello.", QUICK).await;
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(mock.requests().len(), 1);
    let result = r.result();
    assert_eq!(result["subtype"], "error_content_filter");
    assert_eq!(result["stop_reason"], "content_filter");
    let reason = result["reason"].as_str().unwrap();
    assert!(
        reason.contains("content filter refused the prompt"),
        "{reason}"
    );
    assert!(reason.contains("filtered: jailbreak"), "{reason}");
}

/// A web page sent as an event stream, or framed in `data:` lines, ends the run (exit 5)
/// with the page's words in result.json, after one request.
#[tokio::test(flavor = "multi_thread")]
async fn a_web_page_sent_as_an_event_stream_ends_with_its_words() {
    for (file, words) in [
        (
            "html_as_stream.http",
            "Your network requires you to sign in",
        ),
        ("html_framed_as_data.http", "502 Bad Gateway"),
    ] {
        let page = http_fixture("proxy", file);
        let mock = MockServer::start(vec![page.reply(), page.reply(), page.reply()]).await;
        let (r, _tmp) = run_replayed("proxy", &mock.url(), "Say hello.", QUICK).await;
        assert_eq!(r.code, 5, "{file}: {}", r.stderr);
        assert_eq!(mock.requests().len(), 1, "{file}");
        let reason = r.result()["reason"].as_str().unwrap().to_owned();
        assert!(reason.contains(words), "{file}: {reason}");
        assert!(
            reason.contains("expected an event stream"),
            "{file}: {reason}"
        );
    }
}
