//! The trajectory of hand-written events: steps in order with their metrics, every call
//! with its whole result and verdict, the subagent embedded where its call refers to it.

use serde_json::Value;

use super::*;
use crate::report::transcript::sample::every_kind;

fn of(text: &str) -> Value {
    let t = Transcript::of(&every_kind(text).list, &Redactor::none());
    serde_json::from_str(&render(&t, &Redactor::none())).unwrap()
}

#[test]
fn steps_are_numbered_and_carry_their_metrics_and_calls() {
    let t = of("x");
    let steps = t["steps"].as_array().unwrap();
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["step_id"], i + 1);
    }
    let sources: Vec<&str> = steps
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["user", "agent", "agent", "system"], "{t}");
    let first = &steps[1];
    assert_eq!(first["metrics"]["prompt_tokens"], 10);
    assert_eq!(first["metrics"]["completion_tokens"], 2);
    assert_eq!(first["metrics"]["cost_usd"], 0.01);
    assert_eq!(first["reasoning_content"], "thinking: x");
    assert_eq!(first["llm_call_count"], 1);
    let calls = first["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["function_name"], "Bash");
    assert_eq!(calls[0]["arguments"]["command"], "x");
    // A call whose arguments are not a JSON object keeps them as text.
    assert_eq!(calls[1]["arguments"], serde_json::json!({}));
    assert_eq!(calls[1]["extra"]["raw_arguments"], "x");
    let results = first["observation"]["results"].as_array().unwrap();
    assert_eq!(results[0]["source_call_id"], "x");
    assert_eq!(
        results[0]["extra"]["verdict"]["decision"]["rule"],
        "Bash(echo *)"
    );
    assert_eq!(results[0]["extra"]["checkpoint"]["index"], 1);
    assert_eq!(steps[3]["message"], "Check `x` (attempt 1): failed.");
    assert_eq!(t["final_metrics"]["total_steps"], 4);
    assert_eq!(t["final_metrics"]["total_prompt_tokens"], 30);
    assert_eq!(t["final_metrics"]["extra"]["status"], "failed");
}

#[test]
fn a_subagent_is_an_embedded_trajectory_its_call_refers_to() {
    let t = of("x");
    let second = &t["steps"][2];
    let sub = second["observation"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["source_call_id"] == "c4")
        .unwrap();
    let id = sub["subagent_trajectory_ref"][0]["trajectory_id"]
        .as_str()
        .unwrap();
    assert_eq!(id, "r1/c4");
    let embedded = &t["subagent_trajectories"][0];
    assert_eq!(embedded["trajectory_id"], id);
    assert_eq!(embedded["steps"][0]["source"], "user");
    assert_eq!(embedded["steps"][1]["tool_calls"][0]["tool_call_id"], "n1");
    assert_eq!(embedded["final_metrics"]["total_prompt_tokens"], 10);
    let denied = second["observation"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["source_call_id"] == "c5")
        .unwrap();
    assert_eq!(denied["extra"]["verdict"]["resolution"], "denied");
}

#[test]
fn a_run_with_no_message_still_has_a_step() {
    let mut e = crate::report::transcript::sample::Events::default();
    e.started("j", "p", false);
    let t = Transcript::of(&e.list, &Redactor::none());
    let v: Value = serde_json::from_str(&render(&t, &Redactor::none())).unwrap();
    assert_eq!(v["steps"].as_array().unwrap().len(), 1);
    assert_eq!(v["steps"][0]["source"], "system");
}
