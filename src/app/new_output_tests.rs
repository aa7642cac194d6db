//! A new output is its fold and one row, nothing more: the test-only probe-tally.json
//! (`report::probe_output`, a row in `run::file_outputs::FILE_OUTPUTS`) gets every event
//! of a run and is written in the run folder at its end; a tally that cannot be written
//! makes the run exit 6 naming it, with result.json still written — and no other file of
//! the crate names it.

use std::path::Path;

use crate::exit_code::Status;
use crate::job::{self, LoadOptions};
use crate::report::probe_output::FILE_NAME;

const SCRIPT: &str =
    "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: done\n";

fn run(dir: &Path) -> crate::report::RunResult {
    std::fs::write(dir.join("turns.yaml"), SCRIPT).expect("a script");
    let text = format!(
        "name: tallied\nprompt: go\nmodel:\n  provider: script\n  name: s\n  script: {}\n",
        dir.join("turns.yaml").display()
    );
    let job = job::load_str(&text, "tallied.yaml", None, &LoadOptions::default()).expect("loads");
    super::new_provider_tests::run(super::new_provider_tests::resolved(dir, job))
        .expect("the run starts")
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("written");
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn a_new_output_folds_every_event_of_the_run_into_its_file() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let result = run(dir.path());
    assert_eq!(result.status, Status::Success, "{}", result.reason);
    let out = dir.path().join("out");
    let tally = json(&out.join(FILE_NAME));
    let events = std::fs::read_to_string(out.join("events.jsonl")).expect("events");
    assert_eq!(tally["events"], events.lines().count(), "{tally}");
    assert_eq!(tally["tool_calls"], 1, "{tally}");
    assert_eq!(tally["status"], "success", "{tally}");
}

#[test]
fn a_new_output_that_cannot_be_written_is_exit_6_naming_it() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // A folder where the tally goes: the write fails (and nothing may remove it).
    std::fs::create_dir_all(dir.path().join("out").join(FILE_NAME).join("x")).expect("made");
    let result = run(dir.path());
    assert_eq!(result.status, Status::InternalError, "{}", result.reason);
    assert!(result.reason.contains(FILE_NAME), "{}", result.reason);
    let on_disk = json(&dir.path().join("out/result.json"));
    assert_eq!(on_disk["status"], "internal_error", "{on_disk}");
    assert_eq!(on_disk["agent_finished"], true, "{on_disk}");
}
