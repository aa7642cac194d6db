//! Events written by hand for the readers' unit tests: a builder, and a run of every kind
//! of event whose every model- or tool-written string is a given text.

use serde_json::{Value, json};

use crate::events::Envelope;

/// Events in order, numbered as a run numbers them.
#[derive(Debug, Default)]
pub(crate) struct Events {
    pub(crate) list: Vec<Envelope>,
}

impl Events {
    /// Appends `event` (an object with its `type`), of the nested agent of `parent`.
    pub(crate) fn push(&mut self, parent: Option<&str>, event: Value) -> &mut Self {
        let seq = self.list.len() as u64 + 1;
        let mut v = json!({"schema_version": 1, "seq": seq,
            "ts": format!("2026-01-01T00:00:{:02}.000Z", seq.min(59)), "run_id": "r1"});
        if let Some(p) = parent {
            v["parent_call_id"] = json!(p);
        }
        if let Value::Object(fields) = event {
            for (k, val) in fields {
                v[k] = val;
            }
        }
        self.list.push(serde_json::from_value(v).unwrap());
        self
    }

    pub(crate) fn started(&mut self, job: &str, prompt: &str, resumed: bool) -> &mut Self {
        self.push(
            None,
            json!({"type": "run.started", "job": job, "prompt": prompt, "provider": "script",
                "model": "m", "workspace": "/w", "tools": ["Bash", "Edit"], "mode": "headless",
                "resumed": resumed, "output_dir": "/o", "checks": ["unit"],
                "policy": [{"pattern": "Bash(echo *)", "permission": "allow", "source": "job"}],
                "report_path": "/o/report.html"}),
        )
    }

    pub(crate) fn user(&mut self, parent: Option<&str>, text: &str) -> &mut Self {
        self.push(
            parent,
            json!({"type": "message.appended", "message": {"role": "user", "content": text}}),
        )
    }

    pub(crate) fn turn(&mut self, parent: Option<&str>, turn: u32) -> &mut Self {
        self.push(parent, json!({"type": "turn.started", "turn": turn}))
    }

    /// A response with `calls` as (id, tool, arguments text); 10 tokens in, 2 out, $0.01.
    pub(crate) fn response(
        &mut self,
        parent: Option<&str>,
        turn: u32,
        text: &str,
        calls: &[(&str, &str, &str)],
    ) -> &mut Self {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| json!({"id": id, "name": name, "arguments": args}))
            .collect();
        self.push(
            parent,
            json!({"type": "assistant.message", "turn": turn, "text": text, "tool_calls": calls,
                "usage": {"input_tokens": 10, "output_tokens": 2}, "cost_usd": 0.01,
                "stop_reason": "tool_calls"}),
        )
        .push(
            parent,
            json!({"type": "message.appended", "message": {"role": "assistant", "content": text,
                "tool_calls": calls, "reasoning": {"text": format!("thinking: {text}")}}}),
        )
    }

    /// A call that ran, allowed by `rule`, with its result.
    pub(crate) fn ran(
        &mut self,
        parent: Option<&str>,
        id: &str,
        tool: &str,
        args: Value,
        out: &str,
    ) -> &mut Self {
        let mut started = json!({"type": "tool.started", "turn": 1, "call_id": id, "tool": tool,
            "decision": {"permission": "allow", "rule": "Bash(echo *)", "source": "job",
                "reason": "allowed by the job", "allow_hint": null}});
        started["arguments"] = args;
        self.push(parent, started);
        self.result(parent, id, tool, out, false)
    }

    /// A call a rule excluded.
    pub(crate) fn denied(&mut self, id: &str, tool: &str, args: Value, rule: &str) -> &mut Self {
        let mut decision = json!({"type": "permission.decision", "turn": 1, "call_id": id,
            "tool": tool, "resolution": "denied", "permission": "exclude", "rule": rule,
            "source": "job", "reason": format!("excluded by {rule}"), "allow_hint": rule});
        decision["arguments"] = args;
        self.push(None, decision);
        self.result(None, id, tool, "Permission denied", true)
    }

    pub(crate) fn result(
        &mut self,
        parent: Option<&str>,
        id: &str,
        tool: &str,
        out: &str,
        error: bool,
    ) -> &mut Self {
        let status = if error { "error" } else { "ok" };
        self.push(
            parent,
            json!({"type": "tool.finished", "turn": 1, "call_id": id, "tool": tool,
                "status": status, "output": out, "duration_ms": 3}),
        )
        .push(
            parent,
            json!({"type": "message.appended", "message": {"role": "tool", "tool_call_id": id,
                "name": tool, "content": out, "is_error": error}}),
        )
    }

    pub(crate) fn completed(&mut self, status: &str, code: i32, result: &str) -> &mut Self {
        self.push(
            None,
            json!({"type": "run.completed", "status": status, "exit_code": code,
                "reason": "the agent finished", "result": result, "num_turns": 2,
                "duration_ms": 1500, "usage": {"input_tokens": 30, "output_tokens": 6},
                "total_cost_usd": 0.03, "cost_unknown": false, "agent_finished": true}),
        )
    }
}

/// A run with every kind of event, `text` in every string the model, a tool, a check or
/// an MCP server wrote (and in the job's name).
pub(crate) fn every_kind(text: &str) -> Events {
    let mut e = Events::default();
    let args = json!({ "command": text, text: text });
    e.started(text, text, false)
        .push(None, json!({"type": "config.resolved",
            "config": crate::events::config_sample(json!({"max_turns": 5}))}))
        .user(None, text)
        .turn(None, 1)
        .response(None, 1, text, &[(text, "Bash", &args.to_string()), ("c2", text, text)])
        .ran(None, text, "Bash", args, text)
        .result(None, "c2", text, text, true)
        .push(None, json!({"type": "checkpoint.created", "turn": 1, "index": 1,
            "reference": "refs/cn-run/r1/1", "commit": "0123456789abcdef", "call_id": text,
            "label": text, "files_changed": 1}))
        .push(None, json!({"type": "turn.completed", "turn": 1, "num_turns": 1}))
        .turn(None, 2)
        .response(None, 2, text, &[("c3", "Edit", &json!({"file_path": text,
            "old_string": text, "new_string": format!("{text}\n{text}")}).to_string()),
            ("c4", "Subagent", "{}"), ("c5", "Bash", "{\"command\": \"rm -rf /\"}")])
        .ran(None, "c3", "Edit", json!({"file_path": text, "old_string": text, "new_string": text}), text)
        .user(Some("c4"), text)
        .response(Some("c4"), 1, text, &[("n1", "Read", &json!({"filepath": text}).to_string())])
        .ran(Some("c4"), "n1", "Read", json!({"filepath": text}), text)
        .result(None, "c4", "Subagent", text, false)
        .denied("c5", "Bash", json!({"command": "rm -rf /"}), text)
        .push(None, json!({"type": "model.retry", "turn": 2, "attempt": 1, "delay_ms": 10,
            "error_kind": "server", "message": text}))
        .push(None, json!({"type": "warning", "message": text}))
        .push(None, json!({"type": "rule.applied", "turn": 1, "name": text, "origin": text, "reason": text}))
        .push(None, json!({"type": "mcp.server", "name": text, "transport": "stdio", "status": "failed",
            "tools": 0, "message": text, "startup_ms": 3}))
        .push(None, json!({"type": "mcp.notification", "server": text, "kind": "log",
            "call_id": null, "level": "info", "progress": null, "total": null, "message": text}))
        .push(None, json!({"type": "check.finished", "name": text, "attempt": 1, "passed": false,
            "exit_code": 1, "duration_ms": 4, "timed_out": false, "output_tail": text}))
        .push(None, json!({"type": "artifact.collected", "path": text, "stored": text, "size": 3,
            "sha256": text, "kind": text}))
        .push(None, json!({"type": "changes.recorded", "patch_path": "/o/diff.patch",
            "diff": {"files": 1, "insertions": 1, "deletions": 0}, "secret_in_diff": false,
            "checkpoints": [], "skipped": [], "git_added_bytes": 10,
            "files": [{"path": text, "kind": "modified", "binary": false, "insertions": 1, "deletions": 0}]}))
        .completed("failed", 1, text);
    e
}
