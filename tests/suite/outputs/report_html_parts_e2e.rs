//! report.html for runs that use what a page must show beyond the conversation: a priced
//! model (tokens and cost per turn), artifacts, an MCP server, a subagent and the sandbox's
//! record, each read back from the DOM Chromium built against result.json; a planted
//! secret masked on the page and in the ATIF trajectory (the command really printed it:
//! the control); and a run killed with SIGKILL mid-call, whose page `cn-run report`
//! rebuilds from what it left, and whose resume writes the page of the whole run.

use std::path::Path;

use serde_json::Value;

use super::report_html_e2e::section;
use crate::support::browser;
use crate::support::live::{Live, gate, wait_for_text};
use crate::support::procs;
use crate::support::runner::{cn_run, git_init, run, write_files};

/// `job` (a whole job file) and `script` in `dir`, a git repository with `a.txt`.
fn setup(dir: &Path, job: &str, script: &str) {
    write_files(
        dir,
        &[("job.yaml", job), ("s.yaml", script), ("a.txt", "a\n")],
    );
    git_init(dir);
}

#[test]
fn a_priced_run_with_artifacts_an_mcp_server_and_a_subagent_shows_each() {
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "version: 1\nname: parts\nmodel: {{provider: script, name: m, script: s.yaml, pricing: {{input_per_mtok: 1000, output_per_mtok: 2000}}}}\nprompt: fix a.txt\nartifacts: [a.txt]\npermissions: {{allow: ['mcp__fx__echo']}}\nmcp_servers:\n  fx:\n    command: {}\nsubagents:\n  - {{name: worker, description: Reads files., system_prompt: You read files., tools: [Read]}}\n",
        super::mcp_e2e::fixture().display()
    );
    let script = "turns:\n  - usage: {input_tokens: 1000, output_tokens: 100}\n    tool_calls: [{name: mcp__fx__echo, id: m1, arguments: {text: hello from mcp}}]\n  - usage: {input_tokens: 2000, output_tokens: 200}\n    tool_calls: [{name: Subagent, id: sub1, arguments: {subagent_name: worker, description: read it, prompt: read a.txt}}]\n  - usage: {input_tokens: 10, output_tokens: 5}\n    tool_calls: [{name: Read, id: n1, arguments: {filepath: a.txt}}]\n  - usage: {input_tokens: 10, output_tokens: 5}\n    text: the worker says a\n  - usage: {input_tokens: 3000, output_tokens: 300}\n    text: all done\n";
    setup(tmp.path(), &job, script);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let page = tmp.path().join("out/report.html");
    let opened = browser::open(&chromium, &page, &browser::shot_path("parts"), (1280, 3000));
    assert!(
        opened.page_requests.is_empty(),
        "{:?}",
        opened.page_requests
    );
    let dom = &opened.dom;
    // Each turn's tokens and cost: 1,000 in at $1,000/M + 100 out at $2,000/M = $1.2000;
    // the second with its subagent's two responses (10 in, 5 out: $0.0200 each).
    let timeline = section(dom, "timeline");
    for (tokens_in, tokens_out, cost) in [
        ("1,000", "100", "$1.2000"),
        ("2,020", "210", "$2.4400"),
        ("3,000", "300", "$3.6000"),
    ] {
        let cells = format!(
            "<td class=\"num\">{tokens_in}</td><td class=\"num\">{tokens_out}</td><td class=\"num\">{cost}</td>"
        );
        assert!(timeline.contains(&cells), "{cells}: {timeline}");
    }
    assert!((result["total_cost_usd"].as_f64().unwrap() - 7.24).abs() < 1e-9);
    assert!(section(dom, "outcome").contains("$7.2400"));
    let artifacts = section(dom, "artifacts");
    let sha = result["artifacts"][0]["sha256"].as_str().unwrap();
    assert!(
        artifacts.contains("a.txt") && artifacts.contains(sha),
        "{artifacts}"
    );
    let mcp = section(dom, "mcp");
    assert!(
        mcp.contains("<code>fx</code>") && mcp.contains("ready"),
        "{mcp}"
    );
    assert!(section(dom, "conversation").contains("hello from mcp"));
    let subagents = section(dom, "subagents");
    assert!(subagents.contains("href=\"#c2\""), "{subagents}");
    let talk = section(dom, "conversation");
    let call = &talk[talk.find("id=\"c2\"").unwrap()..];
    assert!(
        call.contains("the worker says a"),
        "its conversation is inside the call"
    );
    assert_sandbox_shown(dom, &result);
}

/// The sandbox section names the mechanism and each protection result.json records as
/// enforced (and each it records as missing).
fn assert_sandbox_shown(dom: &str, result: &Value) {
    let sandbox = section(dom, "sandbox");
    let record = &result["sandbox"];
    assert!(
        sandbox.contains(record["mechanism"].as_str().unwrap()),
        "{sandbox}"
    );
    let listed = |key: &str| -> Vec<String> {
        record[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let enforced = listed("enforced");
    for p in enforced.iter().chain(listed("missing").iter()) {
        assert!(sandbox.contains(&format!(">{p}<")), "{p}: {sandbox}");
    }
}

#[test]
fn a_planted_secret_is_masked_on_the_page_and_in_the_trajectory() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = "ghp_plantedPageSecret314";
    let job = "version: 1\nname: secret\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: fix a.txt\npermissions: {mode: auto}\ntools: {bash: {env: [DEPLOY_TOKEN]}}\n";
    let script = format!(
        "turns:\n  - tool_calls: [{{name: Bash, id: b1, arguments: {{command: 'echo token=$DEPLOY_TOKEN; echo $DEPLOY_TOKEN > leaked.txt'}}}}]\n  - tool_calls: [{{name: Write, id: w1, arguments: {{filepath: conf.txt, content: 'key {secret}'}}}}]\n  - text: 'the token is {secret}'\n"
    );
    setup(tmp.path(), job, &script);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml").env("DEPLOY_TOKEN", secret);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    // The control: the command really had it and wrote it.
    let leaked = std::fs::read_to_string(tmp.path().join("leaked.txt")).unwrap();
    assert_eq!(leaked.trim(), secret);
    let html = std::fs::read_to_string(tmp.path().join("out/report.html")).unwrap();
    // `report` later, without the secret in its environment: the events are masked.
    let traj = tmp.path().join("t.json");
    let mut cmd = cn_run(tmp.path());
    cmd.arg("report")
        .arg(tmp.path().join("out"))
        .arg("--atif")
        .arg(&traj)
        .arg("--html")
        .arg(tmp.path().join("again.html"));
    assert_eq!(run(cmd, None).code, 0);
    let again = std::fs::read_to_string(tmp.path().join("again.html")).unwrap();
    let trajectory = std::fs::read_to_string(&traj).unwrap();
    for (name, text) in [
        ("page", &html),
        ("rebuilt page", &again),
        ("trajectory", &trajectory),
    ] {
        assert!(!text.contains(secret), "the {name} holds the secret");
        assert!(!text.contains("PageSecret"), "the {name} holds part of it");
        assert!(
            text.contains("token=[REDACTED]"),
            "the {name} lost the output"
        );
    }
    assert!(html.contains("the token is [REDACTED]"));
}

#[test]
fn a_run_killed_mid_call_is_rebuilt_and_its_resume_writes_the_whole_page() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let job = "version: 1\nname: killed\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: fix a.txt\npermissions: {mode: auto}\n";
    let script = format!(
        "turns:\n  - tool_calls: [{{name: Bash, arguments: {{command: 'echo before-the-kill'}}}}]\n{}  - text: finished after the kill\n",
        gate("go")
    );
    setup(ws, job, &script);
    let out = ws.join("out");
    let mut cmd = cn_run(ws);
    cmd.args(["job.yaml", "--out", "out"]);
    let live = Live::start(cmd, ws, Some(&out));
    assert!(wait_for_text(&out.join("events.jsonl"), "-e go ]"));
    live.signal("KILL");
    let killed = live.wait();
    procs::kill_in_dir(ws);
    assert_eq!(killed.code, -1, "killed by the signal: {killed:#?}");
    assert!(
        !out.join("report.html").exists(),
        "a killed run wrote its page"
    );
    let page = ws.join("killed.html");
    let mut cmd = cn_run(ws);
    cmd.arg("report").arg(&out).arg("--html").arg(&page);
    assert_eq!(run(cmd, None).code, 0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("the run did not finish"),
        "the outcome says so"
    );
    assert!(html.contains("before-the-kill") && html.contains("No result recorded"));
    let mut cmd = cn_run(ws);
    cmd.arg("--resume").arg(&out);
    let resumed = run(cmd, None);
    assert_eq!(resumed.code, 0, "{resumed:#?}");
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let opened = browser::open(
        &chromium,
        &out.join("report.html"),
        &browser::shot_path("killed-resumed"),
        (1280, 1600),
    );
    assert_eq!(browser::title(&opened.dom), "cn-run: killed — success");
    let talk = section(&opened.dom, "conversation");
    let resume = talk.find("Resumed at").expect("the resume is marked");
    assert!(talk.find("before-the-kill").unwrap() < resume);
    assert!(talk[resume..].contains("finished after the kill"), "{talk}");
    assert!(
        opened.page_requests.is_empty(),
        "{:?}",
        opened.page_requests
    );
}
