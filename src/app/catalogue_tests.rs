//! A new tool is its catalogue row and its body, nothing more: the test-only Probe
//! (`catalog::probe`, a `Writes` tool whose rule argument is the file `target`, and its
//! body `tools::probe`) is offered with the schema its argument struct gives, known to job
//! validation, matched by permission rules, excluded in plan mode and checkpointed — and no
//! other file of the crate names it.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::events::{Emitter, Event, MemorySink};
use crate::permissions::{Mode, Permission, Policy, PolicyInput, RuleSpec};
use crate::tools::{ToolContext, ToolLimits, ToolRegistry, ToolShared, builtin_tools};

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in builtin_tools("some-model") {
        registry.register(tool);
    }
    registry
}

#[test]
fn a_new_tool_is_offered_with_the_schema_of_its_argument_struct() {
    let registry = registry();
    assert!(registry.names().iter().any(|n| n == "Probe"));
    let spec = registry.specs().into_iter().find(|s| s.name == "Probe");
    let spec = spec.expect("offered");
    assert_eq!(
        spec.parameters,
        json!({"type": "object", "required": ["target"], "properties": {
            "target": {"type": "string", "description": "The file to stamp."},
            "stamp": {"type": "string", "description": "What to write into it."}
        }})
    );
}

#[test]
fn a_new_tool_is_known_to_job_validation() {
    assert_eq!(crate::job::unknown_rule_tool("Probe(src/**)"), None);
    let misspelt = crate::job::unknown_rule_tool("Prboe(src/**)").unwrap_or_default();
    assert!(misspelt.contains("did you mean `Probe`?"), "{misspelt}");
}

fn decide(mode: Mode, rules: &[(&str, Permission)], target: &str) -> Permission {
    let input = PolicyInput {
        mode,
        job: rules
            .iter()
            .map(|(p, perm)| RuleSpec::new(*p, *perm))
            .collect(),
        ..PolicyInput::default()
    };
    let policy = Policy::build(input, Path::new("/ws")).expect("a policy");
    policy
        .check("Probe", &json!({ "target": target }), None)
        .permission
}

#[test]
fn a_new_tool_is_matched_by_rules_on_its_argument_and_excluded_in_plan_mode() {
    let rules = [
        ("Probe(src/**)", Permission::Allow),
        ("Probe(docs/**)", Permission::Exclude),
    ];
    assert_eq!(
        decide(Mode::Headless, &rules, "src/a.rs"),
        Permission::Allow
    );
    assert_eq!(
        decide(Mode::Headless, &rules, "docs/a.md"),
        Permission::Exclude
    );
    // A file no rule names: the default table asks for every tool that writes.
    assert_eq!(decide(Mode::Headless, &rules, "lib/a.rs"), Permission::Ask);
    // A tool that writes is excluded in plan mode, whatever the job allows.
    assert_eq!(decide(Mode::Plan, &rules, "src/a.rs"), Permission::Exclude);
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[tokio::test]
async fn a_new_tool_that_writes_is_checkpointed_with_the_file_it_names() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let ws = tmp.path().canonicalize().expect("canonical");
    git(&ws, &["init", "-q"]);
    std::fs::write(ws.join("a.txt"), "a\n").expect("written");
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "start"]);
    let sink = MemorySink::new();
    let emitter = Arc::new(Emitter::new("r1"));
    emitter.add_sink(Box::new(sink.clone()));
    let out = tmp.path().join(".cn-run/r1");
    let early = crate::run::checkpoints::Early::open(&ws);
    let (checkpoints, _status) =
        early.bind("r1", &out, &crate::job::GitSettings::default(), &emitter);
    // As the dispatcher does before a call that may change files: the start snapshot.
    checkpoints.ready();
    let registry = registry();
    let probe = registry.get("Probe").expect("offered");
    assert!(probe.is_mutating());
    let shared = ToolShared::new(
        ws.clone(),
        Vec::new(),
        CancellationToken::new(),
        ToolLimits::default(),
        out.clone(),
    );
    let args = json!({"target": "a.txt", "stamp": "b\n"});
    let ctx = ToolContext::new(Arc::new(shared), 1, "c1");
    probe.run(args.clone(), &ctx).await.expect("it runs");
    checkpoints.after_call(1, "c1", "Probe", &args);
    assert!(checkpoints.ready());
    let made: Vec<(String, usize)> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e.event {
            Event::CheckpointCreated {
                label,
                files_changed,
                ..
            } => Some((label, files_changed)),
            _ => None,
        })
        .collect();
    assert_eq!(made.last(), Some(&("Probe c1".to_owned(), 1)), "{made:?}");
    assert_eq!(
        crate::run::checkpoints::touched_file(&ws, "Probe", &args),
        Some(ws.join("a.txt"))
    );
}
