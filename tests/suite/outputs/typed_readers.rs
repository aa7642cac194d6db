//! The suite's typed readers (`support::typed`) read what a real run writes: result.json's
//! outcome and counters with the crate's types, events.jsonl as the crate's events — and a
//! line the crate does not know fails the read instead of being skipped.

use cn_run::events::Event;
use cn_run::exit_code::Status;

use crate::support::runner::{Run, cn_run, run, write_files};

fn one_call_run(dir: &std::path::Path) -> Run {
    write_files(
        dir,
        &[
            (
                "job.yaml",
                "version: 1\nname: typed\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\npermissions: {allow: ['Bash(echo *)']}\n",
            ),
            (
                "s.yaml",
                "turns:\n  - tool_calls:\n      - {name: Bash, id: c1, arguments: {command: echo hi}}\n  - text: done\n",
            ),
        ],
    );
    let mut cmd = cn_run(dir);
    cmd.arg("job.yaml");
    run(cmd, Some(&dir.join("out")))
}

#[test]
fn a_runs_result_and_events_read_typed_and_agree_with_the_json() {
    let tmp = tempfile::tempdir().unwrap();
    let r = one_call_run(tmp.path());
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.typed_result();
    assert_eq!(result.status, Status::Success);
    assert_eq!((result.exit_code, result.num_tool_calls), (0, 1));
    assert_eq!(result.result, "done");
    assert_eq!(result.job, "typed");
    assert_eq!(result.run_id, r.result()["run_id"]);
    let events = r.typed_events();
    assert_eq!(events.len(), r.events().len());
    let main = r.main_events();
    assert!(matches!(main.first(), Some(Event::RunStarted { .. })));
    assert!(matches!(
        main.last(),
        Some(Event::RunCompleted {
            status: Status::Success,
            ..
        })
    ));
    let finished: Vec<_> = main
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished { tool, output, .. } => Some((tool.as_str(), output.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].0, "Bash");
    assert!(finished[0].1.contains("hi"), "{finished:?}");
}

#[test]
fn an_event_the_crate_does_not_know_fails_the_typed_read() {
    let tmp = tempfile::tempdir().unwrap();
    let r = one_call_run(tmp.path());
    let path = tmp.path().join("out/events.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    // The control: the file as written reads.
    assert!(!r.typed_events().is_empty());
    text.push_str(r#"{"schema_version":1,"seq":999,"ts":"t","run_id":"r","type":"run.exploded"}"#);
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    let read = std::panic::catch_unwind(|| r.typed_events());
    assert!(read.is_err(), "an unknown event type was skipped");
}
