//! `cn-run report RUN --atif FILE`: runs of several shapes (edits and checks, a denial, a
//! limit, a resume, a subagent, hostile text) as ATIF trajectories, validated by Harbor's
//! own trajectory models (the `harbor` package from PyPI: `Trajectory.model_validate` and
//! its `TrajectoryValidator`), and read back for what they must carry: every call with its
//! whole result, per-step and final metrics equal to result.json's, the subagent's
//! trajectory embedded where its call refers to it. A broken trajectory is the control:
//! the validator rejects it. Without Harbor's Python the validation skips, saying so;
//! `.ci/install-report-tools` installs it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::runner::{Run, cn_run, repo_root, run, run_scripted};

fn run_job(dir: &Path, job_rest: &str, script: &str) -> Run {
    run_scripted(dir, "traj", "fix a.txt", job_rest, script, &[])
}

/// `cn-run report` writes the run's trajectory; returns its path and its JSON.
fn trajectory(dir: &Path) -> (PathBuf, Value) {
    let path = dir.join("trajectory.json");
    let mut cmd = cn_run(dir);
    cmd.arg("report")
        .arg(dir.join("out"))
        .arg("--atif")
        .arg(&path);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, json)
}

/// The Python with Harbor installed: `$CN_RUN_HARBOR_PYTHON`, else the one
/// `.ci/install-report-tools` made.
fn harbor_python() -> Option<PathBuf> {
    let python = std::env::var_os("CN_RUN_HARBOR_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/report-tools/py/bin/python"));
    let ok = Command::new(&python)
        .args(["-c", "import harbor.models.trajectories"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::support::browser::missing(&format!(
            "Harbor's models are not importable with {} (run .ci/install-report-tools)",
            python.display()
        ));
    }
    ok.then_some(python)
}

const VALIDATE: &str = r#"
import json, sys
from harbor.models.trajectories import Trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator
out = {}
for path in sys.argv[1:]:
    v = TrajectoryValidator()
    valid = v.validate(path)
    try:
        t = Trajectory.model_validate(json.load(open(path)))
        model = {"ok": True, "steps": len(t.steps), "subagents": len(t.subagent_trajectories or [])}
    except Exception as e:
        model = {"ok": False, "error": str(e)}
    out[path] = {"valid": valid, "errors": v.errors, "model": model}
print(json.dumps(out))
"#;

/// Harbor's verdict on each file: (valid by its validator, valid by its model, errors).
fn harbor_verdicts(python: &Path, files: &[&Path]) -> Value {
    let out = Command::new(python)
        .arg("-c")
        .arg(VALIDATE)
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Steps of a trajectory, flattened with their calls' results by call id.
fn results(t: &Value) -> Vec<(String, Value)> {
    t["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            s["observation"]["results"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|r| {
            (
                r["source_call_id"].as_str().unwrap_or_default().to_owned(),
                r,
            )
        })
        .collect()
}

/// The runs whose trajectories are checked: (name, job lines, script).
fn shapes() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        (
            "edit",
            "permissions: {allow: ['Edit(a.txt)', 'Bash(echo *)']}\nchecks: [{name: unit, run: 'grep -q b a.txt'}]\n",
            "turns:\n  - text: reading\n    usage: {input_tokens: 100, output_tokens: 7, cache_read_tokens: 40}\n    tool_calls: [{name: Read, id: r1, arguments: {filepath: a.txt}}]\n  - usage: {input_tokens: 150, output_tokens: 9}\n    tool_calls: [{name: Edit, id: e1, arguments: {file_path: a.txt, old_string: \"a\\n\", new_string: \"b\\n\"}}, {name: Bash, id: b1, arguments: {command: 'echo done'}}]\n  - text: all good\n    usage: {input_tokens: 200, output_tokens: 3}\n",
        ),
        (
            "denied",
            "permissions: {exclude: ['Bash(rm *)']}\n",
            "turns:\n  - tool_calls: [{name: Bash, id: x1, arguments: {command: 'rm -rf a.txt'}}, {name: Nope, id: x2, arguments: '[1, 2]'}]\n  - text: gave up\n",
        ),
        (
            "limit",
            "limits: {max_turns: 1}\npermissions: {allow: ['Bash(echo *)']}\n",
            "turns:\n  - tool_calls: [{name: Bash, id: b1, arguments: {command: 'echo one'}}]\n  - text: never\n",
        ),
        (
            "subagent",
            "subagents:\n  - {name: worker, description: Reads files., system_prompt: You read files., tools: [Read]}\n",
            "turns:\n  - tool_calls: [{name: Subagent, id: sub1, arguments: {subagent_name: worker, description: read it, prompt: read a.txt}}]\n  - tool_calls: [{name: Read, id: n1, arguments: {filepath: a.txt}}]\n  - text: the file says a\n  - text: the worker read it\n",
        ),
        (
            "hostile",
            "permissions: {mode: auto}\n",
            "turns:\n  - text: \"<script>alert(1)</script> \\\" \\\\ \\u0000 \\u202e\"\n    tool_calls: [{name: Bash, id: \"<id>\\\"\", arguments: {command: \"printf '%s\\\\n' '<img src=x onerror=alert(1)>'\"}}]\n  - text: done\n",
        ),
    ]
}

#[test]
fn runs_of_every_shape_are_trajectories_harbor_accepts_with_their_calls_and_metrics() {
    let shapes = shapes();
    let tmp = tempfile::tempdir().unwrap();
    let mut made = Vec::new();
    for (name, job, script) in &shapes {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let r = run_job(&dir, job, script);
        assert!(r.code == 0 || *name == "limit", "{name}: {r:#?}");
        let (path, t) = trajectory(&dir);
        check_contents(name, &t, &r.result());
        made.push(path);
    }
    // A resumed run: the limited one, continued.
    let limited = tmp.path().join("limit");
    let mut cmd = cn_run(&limited);
    cmd.arg("--resume")
        .arg(limited.join("out"))
        .args(["--max-turns", "5", "-p", "go on"]);
    assert_eq!(run(cmd, None).code, 0);
    let (resumed, t) = trajectory(&limited);
    let system: Vec<&Value> = t["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["source"] == "system")
        .collect();
    assert!(
        system
            .iter()
            .any(|s| s["message"].as_str().unwrap().contains("resumed")),
        "{t}"
    );
    made.push(resumed);
    let Some(python) = harbor_python() else {
        return;
    };
    let files: Vec<&Path> = made.iter().map(PathBuf::as_path).collect();
    let verdicts = harbor_verdicts(&python, &files);
    for f in &files {
        let v = &verdicts[f.to_str().unwrap()];
        assert_eq!(v["valid"], true, "{}: {v}", f.display());
        assert_eq!(v["model"]["ok"], true, "{}: {v}", f.display());
    }
    let subagent = &verdicts[files[3].to_str().unwrap()];
    assert_eq!(subagent["model"]["subagents"], 1, "{subagent}");
}

/// What a trajectory must say about its run, read against result.json.
fn check_contents(name: &str, t: &Value, result: &Value) {
    assert_eq!(t["schema_version"], "ATIF-v1.7");
    assert_eq!(t["session_id"], result["session_id"]);
    assert_eq!(t["agent"]["name"], "cn-run");
    let fm = &t["final_metrics"];
    let usage = &result["usage"];
    assert_eq!(
        fm["total_prompt_tokens"], usage["total_input_tokens"],
        "{name}"
    );
    assert_eq!(
        fm["total_completion_tokens"], usage["output_tokens"],
        "{name}"
    );
    assert_eq!(fm["extra"]["status"], result["status"], "{name}");
    let steps = t["steps"].as_array().unwrap();
    assert_eq!(fm["total_steps"], steps.len());
    assert_eq!(
        (&steps[0]["source"], &steps[0]["message"]),
        (&"user".into(), &"fix a.txt".into())
    );
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["step_id"], i + 1);
    }
    match name {
        "edit" => check_edit(t),
        "denied" => check_denied(t),
        "subagent" => check_subagent(t),
        "hostile" => {
            let said = steps[1]["message"].as_str().unwrap();
            assert!(said.contains("<script>alert(1)</script>"), "{said}");
        }
        _ => {}
    }
}

/// The result of call `id` in `t`.
fn result_of(t: &Value, id: &str) -> Value {
    results(t).into_iter().find(|(i, _)| i == id).unwrap().1
}

fn check_edit(t: &Value) {
    let fm = &t["final_metrics"];
    let steps = t["steps"].as_array().unwrap();
    assert_eq!(
        (&fm["total_prompt_tokens"], &fm["total_completion_tokens"]),
        (&450.into(), &19.into())
    );
    assert_eq!(
        (
            &steps[1]["metrics"]["prompt_tokens"],
            &steps[1]["metrics"]["cached_tokens"]
        ),
        (&100.into(), &40.into())
    );
    for s in steps.iter().filter(|s| s["source"] == "agent") {
        assert!(s["metrics"]["prompt_tokens"].is_u64(), "{s}");
    }
    assert!(
        result_of(t, "r1")["content"]
            .as_str()
            .unwrap()
            .contains('a')
    );
    assert_eq!(
        result_of(t, "e1")["extra"]["verdict"]["decision"]["rule"],
        "Edit(a.txt)"
    );
    assert!(
        results(t)
            .iter()
            .any(|(_, r)| r["extra"]["checkpoint"]["commit"].is_string()),
        "the checkpoint after the edit is named"
    );
    assert!(steps.iter().any(
        |s| s["source"] == "system" && s["message"].as_str().unwrap().contains("Check `unit`")
    ));
}

fn check_denied(t: &Value) {
    let denied = result_of(t, "x1");
    assert_eq!(denied["extra"]["verdict"]["resolution"], "denied");
    assert!(
        denied["content"]
            .as_str()
            .unwrap()
            .starts_with("Permission denied")
    );
    let call = t["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["tool_calls"].as_array().cloned().unwrap_or_default())
        .find(|c| c["tool_call_id"] == "x2")
        .unwrap();
    assert_eq!(
        call["arguments"],
        serde_json::json!({}),
        "arguments that are not an object"
    );
    assert_eq!(call["extra"]["raw_arguments"], "[1, 2]");
}

fn check_subagent(t: &Value) {
    let sub = result_of(t, "sub1");
    let id = sub["subagent_trajectory_ref"][0]["trajectory_id"]
        .as_str()
        .unwrap();
    let embedded = &t["subagent_trajectories"][0];
    assert_eq!(embedded["trajectory_id"], id);
    assert_eq!(embedded["steps"][0]["message"], "read a.txt");
    assert!(
        result_of(embedded, "n1")["content"]
            .as_str()
            .unwrap()
            .contains('a')
    );
}

#[test]
fn the_control_harbor_rejects_a_trajectory_that_breaks_its_rules() {
    let Some(python) = harbor_python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "",
        "turns:\n  - tool_calls: [{name: Read, id: r1, arguments: {filepath: a.txt}}]\n  - text: ok\n",
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let (good, t) = trajectory(tmp.path());
    let broken = |f: &dyn Fn(&mut Value), name: &str| -> PathBuf {
        let mut bad = t.clone();
        f(&mut bad);
        let p = tmp.path().join(name);
        std::fs::write(&p, bad.to_string()).unwrap();
        p
    };
    let renumbered = broken(&|t| t["steps"][0]["step_id"] = 7.into(), "renumbered.json");
    let dangling = broken(
        &|t| t["steps"][1]["observation"]["results"][0]["source_call_id"] = "nope".into(),
        "dangling.json",
    );
    let extra = broken(&|t| t["steps"][0]["colour"] = "red".into(), "extra.json");
    let verdicts = harbor_verdicts(&python, &[&good, &renumbered, &dangling, &extra]);
    assert_eq!(
        verdicts[good.to_str().unwrap()]["valid"],
        true,
        "{verdicts}"
    );
    for bad in [&renumbered, &dangling, &extra] {
        assert_eq!(
            verdicts[bad.to_str().unwrap()]["valid"],
            false,
            "{}: {verdicts}",
            bad.display()
        );
    }
}
