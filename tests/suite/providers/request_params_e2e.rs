//! Request parameters per model family, seen by a loopback server: what each model family is
//! sent, what a server's refusal changes for the rest of the run, and where the command line
//! and the job choose.

use serde_json::{Value, json};

use crate::support::http::{MockServer, RecordedRequest, Reply};
use crate::support::runner::{Run, cn_run, run, write_files};
use crate::support::sse::{anthropic, openai};

async fn run_job(model: &str, args: &[&str]) -> (Run, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nname: params\nmodel:\n{model}  api_key_env: TEST_KEY\n  retry: {{max_retries: 0}}\nprompt: hi\n"
    );
    write_files(tmp.path(), &[("job.yaml", &job)]);
    let dir = tmp.path().to_path_buf();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml")
            .args(&args)
            .env("TEST_KEY", "k-params-1");
        run(cmd, None)
    })
    .await
    .unwrap();
    (r, tmp)
}

fn bodies(requests: &[RecordedRequest]) -> Vec<Value> {
    requests.iter().map(RecordedRequest::json).collect()
}

fn openai_ok() -> Reply {
    Reply::sse(200, openai::answer("fine"))
}

fn anthropic_ok() -> Reply {
    Reply::sse(200, anthropic::answer("fine"))
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_max_tokens_comes_from_the_ceiling_table_the_flag_or_the_servers_error() {
    let server = MockServer::start(vec![anthropic_ok(), anthropic_ok()]).await;
    let model = |name: &str| {
        format!(
            "  provider: anthropic\n  name: {name}\n  api_base: {}\n",
            server.url()
        )
    };
    let (r, _t) = run_job(&model("claude-3-haiku-20240307"), &[]).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let (r, _t) = run_job(&model("claude-3-haiku-20240307"), &["--max-tokens", "1234"]).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let sent: Vec<Value> = bodies(&server.requests())
        .iter()
        .map(|b| b["max_tokens"].clone())
        .collect();
    assert_eq!(sent, [json!(4096), json!(1234)]);

    let refusal = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "max_tokens: 8192 > 2048, which is the maximum allowed number of output tokens for claude-next"}});
    let server = MockServer::start(vec![Reply::json(400, &refusal), anthropic_ok()]).await;
    let (r, _t) = run_job(
        &format!(
            "  provider: anthropic\n  name: claude-next\n  api_base: {}\n",
            server.url()
        ),
        &[],
    )
    .await;
    assert_eq!(r.code, 0, "{r:#?}");
    let sent: Vec<Value> = bodies(&server.requests())
        .iter()
        .map(|b| b["max_tokens"].clone())
        .collect();
    assert_eq!(sent, [json!(8192), json!(2048)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parameter_refused_by_name_is_dropped_once_for_the_rest_of_the_run() {
    let refusals = [
        (
            json!({"error": {"message": "Unsupported value: 'temperature' does not support 0.3 with this model. Only the default (1) value is supported.", "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}),
            "temperature",
        ),
        (
            json!({"object": "error", "message": "Unrecognized request argument supplied: stream_options", "type": "BadRequestError", "code": 400}),
            "stream_options",
        ),
    ];
    for (refusal, param) in refusals {
        let server = MockServer::start(vec![Reply::json(400, &refusal), openai_ok()]).await;
        let model = format!(
            "  provider: openai\n  name: some-model\n  api_base: {}/v1\n  temperature: 0.3\n",
            server.url()
        );
        let (r, _t) = run_job(&model, &[]).await;
        assert_eq!(r.code, 0, "{param}: {r:#?}");
        assert_eq!(r.stdout, "fine\n");
        let sent: Vec<bool> = bodies(&server.requests())
            .iter()
            .map(|b| b.get(param).is_some())
            .collect();
        assert_eq!(sent, [true, false], "{param}");
        assert!(r.stderr.contains(param), "{param}: {}", r.stderr);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn max_tokens_refused_for_max_completion_tokens_switches_names() {
    let refusal = json!({"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}});
    let server = MockServer::start(vec![Reply::json(400, &refusal), openai_ok()]).await;
    let model = format!(
        "  provider: openai\n  name: my-reasoning-deployment\n  api_base: {}/v1\n  max_tokens: 900\n",
        server.url()
    );
    let (r, _t) = run_job(&model, &[]).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let b = bodies(&server.requests());
    assert_eq!(b[0]["max_tokens"], 900);
    assert_eq!(b[1]["max_completion_tokens"], 900);
    assert!(b[1].get("max_tokens").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_that_names_no_parameter_we_sent_is_not_retried() {
    let refusal = json!({"error": {"message": "Unsupported parameter: 'logprobs'", "type": "invalid_request_error"}});
    let server = MockServer::start(vec![Reply::json(400, &refusal), openai_ok()]).await;
    let model = format!(
        "  provider: openai\n  name: m\n  api_base: {}/v1\n",
        server.url()
    );
    let (r, _t) = run_job(&model, &[]).await;
    assert_eq!(r.code, 5, "{r:#?}");
    assert!(
        r.stderr.contains("logprobs"),
        "the server's words: {}",
        r.stderr
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn stream_usage_false_leaves_stream_options_out() {
    let server = MockServer::start(vec![openai_ok()]).await;
    let model = format!(
        "  provider: openai\n  name: m\n  api_base: {}/v1\n  stream_usage: false\n",
        server.url()
    );
    let (r, _t) = run_job(&model, &[]).await;
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(server.requests()[0].json().get("stream_options").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_azure_deployment_url_keeps_its_query_and_gets_the_api_key_header() {
    let server = MockServer::start(vec![openai_ok()]).await;
    let model = format!(
        "  provider: openai\n  name: gpt-4o\n  api_base: {}/openai/deployments/prod-4o?api-version=2024-10-21\n",
        server.url()
    );
    let (r, _t) = run_job(&model, &["--max-tokens", "700"]).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let q = &server.requests()[0];
    assert_eq!(
        q.path,
        "/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(q.header("api-key"), Some("k-params-1"));
    assert_eq!(q.header("authorization"), None);
    assert_eq!(q.json()["max_tokens"], 700);
}
