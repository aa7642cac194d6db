//! Usage and cost: a job's price override and max_cost_usd stop a run cleanly (exit 4);
//! a model with no known price reports cost_unknown, never a silent 0; models without
//! native tool calling use the `<tool>{json}</tool>` text format.

use std::path::Path;

use serde_json::json;

use crate::support::http::{MockServer, Reply};
use crate::support::runner::{Run, cn_run, run, write_files};
use crate::support::sse::openai;

fn list_call(id: &str) -> Reply {
    let mut chunks = vec![openai::role()];
    chunks.extend(openai::tool_call(0, id, "List", &["{\"dirpath\": \".\"}"]));
    chunks.extend([
        openai::finish("tool_calls"),
        openai::usage(1000, 500, 0),
        openai::done(),
    ]);
    Reply::sse(200, chunks)
}

async fn run_job(dir: &Path, job: String) -> Run {
    write_files(dir, &[("job.yaml", &job)]);
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml");
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn max_cost_stops_the_run_with_exit_4() {
    let server = MockServer::start_with(|_| list_call("c")).await;
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nmodel:\n  provider: openai\n  name: house-model\n  api_base: {}/v1\n  pricing: {{input_per_mtok: 1000, output_per_mtok: 1000}}\nprompt: loop\nlimits: {{max_cost_usd: 2.0}}\n",
        server.url()
    );
    let r = run_job(tmp.path(), job).await;
    assert_eq!(r.code, 4, "{r:#?}");
    let result = r.result();
    assert_eq!(result["subtype"], "error_max_budget_usd");
    assert_eq!(
        result["num_turns"], 2,
        "each turn costs $1.50: the third never starts"
    );
    assert!(
        (result["total_cost_usd"].as_f64().unwrap() - 3.0).abs() < 1e-9,
        "{result}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_price_is_reported_as_unknown_not_zero() {
    let server =
        MockServer::start(vec![list_call("c1"), Reply::sse(200, openai::answer("ok"))]).await;
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nmodel: {{provider: openai, name: my-local-llama, api_base: {}/v1}}\nprompt: go\n",
        server.url()
    );
    let r = run_job(tmp.path(), job).await;
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["total_cost_usd"], serde_json::Value::Null);
    assert_eq!(result["cost_unknown"], true);
    assert_eq!(result["usage"]["input_tokens"], 1010);
}

#[tokio::test(flavor = "multi_thread")]
async fn text_tool_calls_for_models_without_tool_calling() {
    let call =
        "I will list.\n<tool>{\"name\": \"List\", \"arguments\": {\"dirpath\": \".\"}}</tool>";
    let server = MockServer::start(vec![
        Reply::sse(200, openai::answer(call)),
        Reply::sse(200, openai::answer("listed")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nmodel: {{provider: openai, name: old-model, api_base: {}/v1, tool_call_format: text}}\nprompt: go\n",
        server.url()
    );
    let r = run_job(tmp.path(), job).await;
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "listed\n");
    let requests = server.requests();
    let first = requests[0].json();
    assert!(first.get("tools").is_none(), "no native tools are sent");
    assert!(
        first["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("<tool>{\"name\": \"TOOL\"")
    );
    let second = requests[1].json();
    let msgs = second["messages"].as_array().unwrap();
    assert!(
        msgs[2]["content"].as_str().unwrap().contains("<tool>"),
        "{}",
        msgs[2]
    );
    assert_eq!(msgs[3]["role"], "user");
    assert!(
        msgs[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("<tool_result name=\"List\">")
    );
    assert_eq!(r.events_of("tool.finished")[0]["tool"], json!("List"));
}
