//! Every kind of event, written as events.jsonl writes it, reads back into [`Envelope`]
//! and writes out to the same JSON: the file can be replayed into the run's outputs.

use super::*;

/// One line of each event type, with every optional field present.
const LINES: &[&str] = &[
    r#"{"type":"run.started","job":"j","prompt":"p","provider":"openai","model":"m","workspace":"/w","tools":["Read","Bash"],"mode":"auto","resumed":false,"output_dir":"/o","session_path":"/o/session.json","checks":["unit"],"isolation":"worktree","sandbox":{"mode":"workspace-write","network":false,"required":false,"mechanism":"bubblewrap","enforced":["private-tmp","no-network"],"missing":["hidden-credentials"],"writable":["/w"],"hidden":[],"notes":["n"]}}"#,
    r#"{"type":"attempt.started","attempt":2}"#,
    r#"{"type":"turn.started","turn":1}"#,
    r#"{"type":"model.retry","turn":1,"attempt":1,"delay_ms":500,"error_kind":"rate_limited","message":"429"}"#,
    r#"{"type":"assistant.message","turn":1,"text":"hi","tool_calls":[{"id":"c1","name":"Bash","arguments":"{\"command\":\"ls\"}"}],"usage":{"input_tokens":6,"cache_creation_input_tokens":1,"cache_read_input_tokens":3,"output_tokens":5,"total_input_tokens":10},"cost_usd":0.1234567891234,"stop_reason":"tool_calls"}"#,
    r#"{"type":"output.incomplete","turn":2,"stop_reason":"length","action":"continue"}"#,
    r#"{"type":"permission.decision","turn":1,"call_id":"c1","tool":"Bash","arguments":{"command":"rm -rf /"},"resolution":"denied","permission":"exclude","rule":"Bash(rm *)","source":"job","reason":"no","allow_hint":"Bash(rm -rf /)"}"#,
    r#"{"type":"hook.ran","hook_event":"PreToolUse","command":"sh guard.sh","origin":"job","call_id":"c1","exit_code":2,"decision":"block","reason":"no rm","failure":"timeout: timed out after 3 s and was killed","stderr":"no rm","duration_ms":12}"#,
    r#"{"type":"tool.started","turn":1,"call_id":"c1","tool":"Bash","arguments":{"command":"ls"}}"#,
    r#"{"type":"tool.finished","turn":1,"call_id":"c1","tool":"Bash","status":"ok","output":"a\nb","duration_ms":3}"#,
    r#"{"type":"turn.completed","turn":1,"num_turns":4,"usage":{"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"total_input_tokens":6},"total_cost_usd":0.25}"#,
    r#"{"type":"compaction","turn":3,"tokens_before":1000,"tokens_after":100,"messages_before":20,"messages_after":4}"#,
    r#"{"type":"checkpoint.created","turn":1,"index":1,"reference":"refs/cn-run/r/1","commit":"abc","call_id":"c1","label":"Write c1","files_changed":2,"skipped":[{"path":"big.bin","bytes":9000000},{"path":"node_modules","bytes":10,"files":5001}]}"#,
    r#"{"type":"check.finished","name":"unit","attempt":1,"passed":false,"exit_code":1,"duration_ms":20,"timed_out":false,"output_tail":"FAIL"}"#,
    r#"{"type":"output.validated","valid":true,"errors":[],"value":{"answer":42}}"#,
    r#"{"type":"artifact.collected","path":"out/report.txt","stored":"/o/artifacts/out/report.txt","size":12,"sha256":"00ff","kind":"text/plain"}"#,
    r#"{"type":"upload.finished","target":"artifacts","ok":false,"status":503,"message":"server error","uploads":2,"failures":1,"last_error":"503","last_at":"2026-01-01T00:00:00.000Z"}"#,
    r#"{"type":"mcp.server","name":"fx","transport":"stdio","status":"failed","tools":0,"message":"gone","startup_ms":12}"#,
    r#"{"type":"changes.recorded","patch_path":"/o/diff.patch","diff":{"files":1,"insertions":2,"deletions":3},"secret_in_diff":true,"checkpoints":[{"index":0,"reference":"refs/cn-run/r1/0","commit":"abc","label":"start","files_changed":0,"skipped":[]}],"skipped":[{"path":"big.bin","bytes":9000000}],"git_added_bytes":4096}"#,
    r#"{"type":"mcp.notification","server":"fx","kind":"progress","call_id":"c1","level":null,"progress":2.0,"total":5.0,"message":"step 2"}"#,
    r#"{"type":"rule.applied","turn":0,"name":"style","origin":"AGENTS.md","reason":"always applies"}"#,
    r#"{"type":"sandbox.established","sandbox":{"mode":"workspace-write","network":false,"required":false,"mechanism":"bubblewrap","enforced":["private-tmp","no-network"],"missing":[],"writable":["/w"],"hidden":["/h/.ssh"],"notes":[],"read_only":["/w/.git"]}}"#,
    r#"{"type":"warning","message":"careful"}"#,
    r#"{"type":"message.appended","message":{"role":"tool","tool_call_id":"c1","name":"Read","content":"x","is_error":true,"images":[{"mime_type":"image/png","data":"iVBO","marker":{"open":"<u>","close":"</u>"}}]}}"#,
    r#"{"type":"history.replaced","history":[{"role":"user","content":"go"},{"role":"assistant","content":"s","tool_calls":[{"id":"c2","name":"Bash","arguments":"{}"}],"summary":true,"reasoning":{"text":"t","field":"reasoning","blocks":[{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"redacted_thinking","data":"xx"}],"call_extra":[{"call_id":"c2","extra":{"google":{"thought_signature":"ts"}}}]}}]}"#,
    r#"{"type":"config.resolved","config":{"job":"j","workspace":"/w","model":{"provider":"script","name":"m","api_base":null,"context_length":128000,"context_length_source":"default","max_tokens":null},"limits":{"max_turns":5,"timeout_s":1800.0,"timeout_source":"default","max_cost_usd":null,"max_tokens":null,"max_calls_per_response":16},"on_ask":"deny","on_ask_source":"default","trust":{"untrusted":false,"untrusted_paths":[],"base_ref":null,"upload_url":false},"require_sandbox":false,"flags":{"provider":null,"api_base":null,"model":null,"api_key_env":null,"script":null,"max_turns":5,"max_tokens":null,"timeout":null,"max_cost_usd":null,"on_ask":null,"params":[],"allow":[],"ask":[],"exclude":[],"auto":false,"readonly":false,"untrusted":false,"base_ref":null,"workspace":null,"require_sandbox":false}}}"#,
    r#"{"type":"session.finished","status":"success","checklist":"- [x] one","num_turns":3,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"total_input_tokens":10},"total_cost_usd":null}"#,
    r#"{"type":"run.completed","status":"limit_reached","exit_code":4,"reason":"max turns","limit":"max_turns","result":"partial","num_turns":3,"duration_ms":1500,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"total_input_tokens":10},"total_cost_usd":0.30000000000000004,"cost_unknown":false,"agent_finished":false,"checklist":"- [x] one"}"#,
];

fn envelope_line(event: &str, seq: usize) -> String {
    let head = format!(
        r#"{{"schema_version":1,"seq":{seq},"ts":"2026-01-01T00:00:00.000Z","run_id":"r1","parent_call_id":"p1","#
    );
    format!("{head}{}", &event[1..])
}

#[test]
fn every_event_type_reads_back_to_the_same_json() {
    for (i, event) in LINES.iter().enumerate() {
        let line = envelope_line(event, i + 1);
        let env: Envelope = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let written: serde_json::Value = serde_json::to_value(&env).unwrap();
        let given: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(written, given, "{}", given["type"]);
        assert_eq!(
            serde_json::to_string(&env).unwrap(),
            serde_json::to_string(&given).unwrap(),
            "the same text too (field order and numbers)"
        );
    }
}

#[test]
fn the_samples_cover_every_event_type() {
    let kinds: std::collections::BTreeSet<String> = LINES
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    // Every `type` the schema allows is sampled above.
    let schema = event_schema();
    let variants = schema["oneOf"].as_array().unwrap();
    for v in variants {
        let tag = v["properties"]["type"]["const"].as_str().unwrap();
        assert!(kinds.contains(tag), "no sample of {tag}");
    }
    assert_eq!(variants.len(), LINES.len());
    assert_eq!(kinds.len(), LINES.len());
}

#[test]
fn lines_written_before_the_new_fields_still_read() {
    let old = r#"{"schema_version":1,"seq":1,"ts":"t","run_id":"r","type":"run.started","job":"j","prompt":"p","provider":"o","model":"m","workspace":"/w","tools":[],"mode":"headless","resumed":false}"#;
    let env: Envelope = serde_json::from_str(old).unwrap();
    let Event::RunStarted {
        checks,
        sandbox,
        output_dir,
        ..
    } = env.event
    else {
        panic!("not run.started");
    };
    assert!(checks.is_empty() && sandbox.is_none() && output_dir.is_empty());
    let upload = r#"{"schema_version":1,"seq":2,"ts":"t","run_id":"r","type":"upload.finished","ok":true,"status":200,"message":"ok"}"#;
    let env: Envelope = serde_json::from_str(upload).unwrap();
    assert!(
        matches!(env.event, Event::UploadFinished { ref target, .. } if *target == crate::events::UploadTarget::Session)
    );
}

#[test]
fn an_unknown_event_type_is_an_error_not_a_silent_skip() {
    let line = r#"{"schema_version":1,"seq":1,"ts":"t","run_id":"r","type":"run.exploded"}"#;
    assert!(serde_json::from_str::<Envelope>(line).is_err());
}
