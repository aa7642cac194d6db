//! The run's sandbox is set up while the run starts, off the path to the first request
//! (issue 38): `run.started` records it as `pending`, the first command — a Bash call in
//! any turn, a background job, two calls of one turn, a check — waits for it and runs
//! contained, and `sandbox.established` says what is enforced before that command starts.
//! Each case has its control: the same payload with `sandbox: off` writes outside. A run
//! that requires the whole profile settles it before its first turn, as before.

use serde_json::{Value, json};

use super::containment_scene::{Scene, bash, namespaces_available};

/// The calls of one case, made for its scene.
type Case = Box<dyn Fn(&Scene) -> Vec<Value>>;

fn read(path: &str) -> Value {
    json!({"name": "Read", "arguments": {"filepath": path}})
}

fn background(command: &str) -> Value {
    json!({"name": "Bash", "arguments": {"command": command, "run_in_background": true}})
}

/// The position of the first event of `kind` (and matching `pred`) in `events`.
fn position(events: &[Value], kind: &str, pred: impl Fn(&Value) -> bool) -> usize {
    events
        .iter()
        .position(|e| e["type"] == kind && pred(e))
        .unwrap_or_else(|| panic!("no {kind} event in {events:#?}"))
}

/// The run's events say the sandbox was pending at the start and established once, before
/// the first event of `first_command` (and its record is result.json's).
fn assert_established_before(r: &crate::support::runner::Run, first_command: usize) {
    let events = r.events();
    let started = &events[position(&events, "run.started", |_| true)];
    assert_eq!(started["sandbox"]["mechanism"], "pending", "{started}");
    let established: Vec<usize> = (0..events.len())
        .filter(|&i| events[i]["type"] == "sandbox.established")
        .collect();
    assert_eq!(established.len(), 1, "{events:#?}");
    assert!(established[0] < first_command, "{events:#?}");
    let record = &events[established[0]]["sandbox"];
    assert_eq!(record["mechanism"], "bubblewrap", "{record}");
    assert_eq!(record, &r.result()["sandbox"]);
}

/// The control: with `sandbox: off` the same calls (made for a new scene, with the job
/// lines `extra`) write outside, so the case can fail.
fn control_escapes(case: impl Fn(&Scene) -> (Vec<Value>, String)) {
    let s = Scene::new();
    std::fs::write(s.ws.join("notes.txt"), "notes\n").unwrap();
    let (calls, extra) = case(&s);
    let r = s.run(
        &calls,
        &format!("{extra}tools: {{bash: {{sandbox: \"off\"}}}}\n"),
    );
    let escaped = std::fs::read_dir(&s.outside).unwrap().count();
    assert!(
        escaped > 0,
        "the payload did not escape uncontained\n{r:#?}"
    );
}

#[test]
fn the_first_bash_call_waits_for_the_sandbox_and_runs_contained() {
    if !namespaces_available() {
        return;
    }
    let cases: Vec<(&str, Case)> = vec![
        ("first-turn", Box::new(|s| vec![bash(&s.payload("a"))])),
        (
            "after-reads",
            Box::new(|s| vec![read("notes.txt"), read("notes.txt"), bash(&s.payload("a"))]),
        ),
        (
            "background",
            Box::new(|s| {
                // The next call waits for the job's mark, so the job has run by the end.
                let wait = "for i in $(seq 200); do [ -e ran-a ] && break; sleep 0.05; done";
                vec![read("notes.txt"), background(&s.payload("a")), bash(wait)]
            }),
        ),
    ];
    for (name, calls) in cases {
        let s = Scene::new();
        std::fs::write(s.ws.join("notes.txt"), "notes\n").unwrap();
        let r = s.run(&calls(&s), "");
        s.assert_ran_but_wrote_nothing_outside(&["a"], &r);
        s.assert_contained(&r);
        let events = r.events();
        let bash_started = position(&events, "tool.started", |e| e["tool"] == "Bash");
        assert_established_before(&r, bash_started);
        control_escapes(|s| (calls(s), String::new()));
        println!("{name}: ok");
    }
}

#[test]
fn two_calls_of_one_turn_wait_for_one_sandbox() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let turn = json!({"tool_calls": [
        {"id": "c1", "name": "Bash", "arguments": {"command": s.payload("one")}},
        {"id": "c2", "name": "Bash", "arguments": {"command": s.payload("two")}},
    ]});
    let r = crate::support::runner::run(s.command(vec![turn], "", &[]), Some(&s.out));
    s.assert_ran_but_wrote_nothing_outside(&["one", "two"], &r);
    s.assert_contained(&r);
    let events = r.events();
    assert_established_before(&r, position(&events, "tool.started", |_| true));
}

#[test]
fn a_check_as_the_first_command_waits_for_the_sandbox() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let checks = |s: &Scene| {
        let run = json!(s.payload("check"));
        format!("checks:\n  - {{name: planted, run: {run}}}\n")
    };
    let r = s.run(&[], &checks(&s));
    s.assert_ran_but_wrote_nothing_outside(&["check"], &r);
    s.assert_contained(&r);
    let events = r.events();
    assert_established_before(&r, position(&events, "check.finished", |_| true));
    control_escapes(|s| (Vec::new(), checks(s)));
}

#[test]
fn a_run_that_requires_the_sandbox_settles_it_before_its_first_turn() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let r = s.run(
        &[bash(&s.payload("req"))],
        "tools: {bash: {require_sandbox: true}}\n",
    );
    s.assert_ran_but_wrote_nothing_outside(&["req"], &r);
    let events = r.events();
    let started = &events[position(&events, "run.started", |_| true)];
    assert_eq!(started["sandbox"]["mechanism"], "bubblewrap", "{started}");
    assert_eq!(started["sandbox"], r.result()["sandbox"]);
    assert!(r.events_of("sandbox.established").is_empty(), "{events:#?}");
}

#[test]
fn a_run_that_starts_no_command_ends_with_a_true_record() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let turns = vec![json!({"tool_calls": [read("missing.txt")]})];
    let summary_file = s.out.with_file_name("gh_summary");
    let mut cmd = s.command(turns, "", &[]);
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary_file);
    let r = crate::support::runner::run(cmd, Some(&s.out));
    assert_eq!(r.code, 0, "{r:#?}");
    let sandbox = r.result()["sandbox"].clone();
    let summary = std::fs::read_to_string(&summary_file).unwrap();
    // Either the set-up had finished by the end (then it is reported as made), or it was
    // stopped: `not-needed`, never `pending` in result.json, and never a record of
    // protections that were not checked.
    match sandbox["mechanism"].as_str() {
        Some("not-needed") => {
            assert_eq!(sandbox["enforced"], json!([]), "{sandbox}");
            assert!(
                sandbox["notes"][0]
                    .as_str()
                    .unwrap()
                    .contains("no command ran"),
                "{sandbox}"
            );
            assert!(r.events_of("sandbox.established").is_empty());
            let line = "**Containment:** workspace-write, not set up: the run started no command";
            assert!(summary.contains(line), "{summary}");
        }
        Some("bubblewrap") => {
            assert_eq!(r.events_of("sandbox.established").len(), 1);
            let line = "**Containment:** bubblewrap (workspace-write): ";
            assert!(summary.contains(line), "{summary}");
        }
        other => panic!("unexpected mechanism {other:?}: {sandbox}"),
    }
}
