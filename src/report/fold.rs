//! The result of a run as a fold over its events: [`ResultBuilder`] takes the envelopes of
//! events.jsonl one by one and nothing else, so the run (fed live) and `cn-run report`
//! (fed from the file) build the same result.json.
//!
//! A file can hold several runs of one session (`--resume`): a run that had finished is
//! followed by a new one (a new instruction), and the result describes the newest. A run
//! that was killed (no `run.completed`) and then resumed is one run, and so is one that
//! stopped short (a limit, a signal) and was resumed without a new instruction
//! (`run.started` with `continues`): its calls, denials and checks count.

use std::path::Path;

use serde_json::Value;

use super::result::{AppliedRule, Denial, RunResult};
use crate::conversation::Usage;
use crate::events::{self, Changes, Envelope, Event, EventSink, SCHEMA_VERSION, Shared};
use crate::exit_code::{Limit, Status};
use crate::upload::UploadStatus;

/// The fold state: the result so far, and what an unfinished run's numbers come from.
#[derive(Debug, Clone)]
pub struct ResultBuilder {
    result: RunResult,
    /// A `run.completed` was seen: the next event starts a new run of the session.
    completed: bool,
    /// Turns, usage and cost of the main agent's messages (for a run that did not finish).
    turns: u32,
    usage: Usage,
    /// The main agent's responses counted, and their cost by `pricing::add_cost` (unknown
    /// once one response's is).
    responses: u32,
    cost: Option<f64>,
    last_ts: String,
}

impl Default for ResultBuilder {
    fn default() -> Self {
        ResultBuilder {
            result: unfinished(),
            completed: false,
            turns: 0,
            usage: Usage::default(),
            responses: 0,
            cost: Some(0.0),
            last_ts: String::new(),
        }
    }
}

/// The result before any event: a run that did not finish.
fn unfinished() -> RunResult {
    RunResult {
        kind: "result",
        schema_version: SCHEMA_VERSION,
        subtype: "error_internal_error".to_owned(),
        status: Status::InternalError,
        exit_code: Status::InternalError.exit_code(),
        is_error: true,
        reason: "the run did not finish (its events end without run.completed)".to_owned(),
        limit: None,
        stop_reason: None,
        result: String::new(),
        agent_finished: false,
        run_id: String::new(),
        session_id: String::new(),
        job: String::new(),
        provider: String::new(),
        model: String::new(),
        num_turns: 0,
        num_tool_calls: 0,
        duration_ms: 0,
        usage: Usage::default(),
        total_cost_usd: None,
        cost_unknown: true,
        permission_denials: Vec::new(),
        pending_approvals: Vec::new(),
        attempts: 0,
        checks: Vec::new(),
        checks_declared: Vec::new(),
        structured_output: None,
        checklist: None,
        artifacts: Vec::new(),
        diff: None,
        patch_path: None,
        changed_files: Vec::new(),
        secret_in_diff: false,
        checkpoints: Vec::new(),
        skipped: Vec::new(),
        git_added_bytes: None,
        rules_applied: Vec::new(),
        upload: None,
        artifacts_upload: None,
        sandbox: None,
        mcp_servers: Vec::new(),
        warnings: Vec::new(),
        junit_suite: None,
        started_at: String::new(),
        finished_at: String::new(),
        output_dir: String::new(),
        events_path: String::new(),
        session_path: None,
        report_path: None,
        workspace: String::new(),
        isolation: None,
        trace_id: None,
    }
}

/// The result of a run from its events, in order.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a Envelope>) -> RunResult {
    let mut builder = ResultBuilder::default();
    for env in events {
        builder.on_event(env);
    }
    builder.result()
}

impl ResultBuilder {
    /// The result as the events so far tell it. Before `run.completed` the numbers come
    /// from the events themselves and the status says the run did not finish.
    pub fn result(&self) -> RunResult {
        let mut r = self.result.clone();
        if !self.completed {
            r.num_turns = self.turns;
            r.usage = self.usage;
            r.total_cost_usd = self.cost.filter(|_| self.responses > 0);
            r.cost_unknown = r.total_cost_usd.is_none();
            r.finished_at.clone_from(&self.last_ts);
            r.duration_ms = millis_between(&r.started_at, &self.last_ts);
        }
        r
    }
}

impl EventSink for ResultBuilder {
    fn on_event(&mut self, env: &Envelope) {
        match &env.event {
            // A resume that goes on where its run stopped short: the same run.
            Event::RunStarted {
                continues: true, ..
            } if self.completed => self.go_on(),
            _ if self.completed => *self = ResultBuilder::default(),
            _ => {}
        }
        if self.result.run_id.is_empty() {
            self.result.run_id.clone_from(&env.run_id);
            self.result.session_id.clone_from(&env.run_id);
            self.result.started_at.clone_from(&env.ts);
        }
        self.last_ts.clone_from(&env.ts);
        let main = env.parent_call_id.is_none();
        match &env.event {
            Event::RunStarted { .. } => self.started(&env.event),
            Event::TurnStarted { turn } if main => {
                self.turns = self.turns.max(*turn);
                self.result.attempts = self.result.attempts.max(1);
            }
            Event::AttemptStarted { attempt } => {
                self.result.attempts = self.result.attempts.max(*attempt);
            }
            Event::AssistantMessage {
                stop_reason,
                usage,
                cost_usd,
                ..
            } => {
                self.result.stop_reason.clone_from(stop_reason);
                self.count(main, usage.as_ref(), *cost_usd);
            }
            // A prompt the provider's filter refused has no answer: its stop is this event's.
            Event::OutputIncomplete {
                stop_reason,
                action,
                ..
            } if main && *action == crate::events::IncompleteAction::Fail => {
                self.result.stop_reason = Some(stop_reason.clone());
            }
            Event::ToolStarted { call_id, .. } => {
                self.result.num_tool_calls += 1;
                self.result
                    .pending_approvals
                    .retain(|p| p.call_id != *call_id);
            }
            Event::PermissionDecision { .. } => {
                if let Some(d) = denial(&env.event) {
                    let pending = &mut self.result.pending_approvals;
                    pending.retain(|p| p.call_id != d.call_id);
                    if d.resolution == "deferred" {
                        pending.push(d.clone());
                    }
                    self.result.permission_denials.push(d);
                }
            }
            _ => self.outputs(env),
        }
    }
}

impl ResultBuilder {
    /// The run goes on after it had reported its end: it has not ended again yet.
    fn go_on(&mut self) {
        self.completed = false;
        let u = unfinished();
        let r = &mut self.result;
        (r.status, r.exit_code, r.is_error) = (u.status, u.exit_code, u.is_error);
        (r.subtype, r.reason, r.limit) = (u.subtype, u.reason, u.limit);
    }

    /// Adds one response of the main agent to an unfinished run's usage and cost.
    fn count(&mut self, main: bool, usage: Option<&Usage>, cost: Option<f64>) {
        if !main {
            return;
        }
        if let Some(u) = usage {
            self.usage.add(u);
        }
        self.responses += 1;
        self.cost = crate::context::pricing::add_cost(self.cost, cost);
    }

    /// Events that add to what the run produced: checks, artifacts, uploads, changes.
    fn outputs(&mut self, env: &Envelope) {
        let r = &mut self.result;
        match &env.event {
            Event::Warning { message } => r.warnings.push(message.clone()),
            Event::CheckFinished(c) => record_check(&mut r.checks, c),
            Event::RuleApplied {
                turn,
                name,
                origin,
                reason,
            } => r.rules_applied.push(AppliedRule {
                turn: *turn,
                name: name.clone(),
                origin: origin.clone(),
                reason: reason.clone(),
            }),
            Event::OutputValidated {
                valid: true,
                value: Some(v),
                ..
            } => r.structured_output = Some(v.clone()),
            Event::ArtifactCollected(a) => {
                // Collected again by a later process of the run: the later copy.
                r.artifacts.retain(|k| k.path != a.path || k.kind != a.kind);
                r.artifacts.push(a.clone());
            }
            Event::McpServer(s) => r.mcp_servers.push(s.clone()),
            Event::ChangesRecorded(c) => changes(r, c),
            Event::SandboxEstablished { sandbox } => r.sandbox = Some(sandbox.as_ref().clone()),
            Event::UploadFinished { .. } => upload(r, &env.event),
            Event::RunCompleted { .. } => self.completed(env),
            // Read by `on_event` (those with a guard: when it holds), or not in result.json.
            events::ignored!(
                turn_marks, call_details, notes, conversation;
                OutputValidated, RunStarted, ModelRetry, AssistantMessage, ToolStarted,
                ToolFinished, CheckpointCreated, SessionFinished
            ) => {}
        }
    }

    /// `run.started`: the resolved settings the result reports.
    fn started(&mut self, event: &Event) {
        let Event::RunStarted {
            job,
            provider,
            model,
            workspace,
            output_dir,
            session_path,
            checks,
            isolation,
            sandbox,
            report_path,
            trace_id,
            ..
        } = event
        else {
            return;
        };
        let r = &mut self.result;
        r.job.clone_from(job);
        r.provider.clone_from(provider);
        r.model.clone_from(model);
        r.workspace.clone_from(workspace);
        r.output_dir.clone_from(output_dir);
        r.events_path = Path::new(output_dir)
            .join("events.jsonl")
            .display()
            .to_string();
        r.session_path.clone_from(session_path);
        r.checks_declared.clone_from(checks);
        r.isolation.clone_from(isolation);
        r.sandbox = sandbox.as_deref().cloned();
        r.report_path.clone_from(report_path);
        r.trace_id.clone_from(trace_id);
    }

    /// `run.completed`: the outcome and the run's totals (a resumed run's include the
    /// runs before it).
    fn completed(&mut self, env: &Envelope) {
        let Event::RunCompleted {
            status,
            exit_code,
            reason,
            limit,
            result,
            num_turns,
            duration_ms,
            usage,
            total_cost_usd,
            cost_unknown,
            agent_finished,
            checklist,
        } = &env.event
        else {
            return;
        };
        self.completed = true;
        let r = &mut self.result;
        if let Some(sandbox) = &mut r.sandbox {
            crate::sandbox::settle_unused(sandbox);
        }
        r.status = *status;
        r.exit_code = *exit_code;
        r.is_error = *status != Status::Success;
        r.subtype = subtype(*status, *limit, r.stop_reason.as_deref());
        r.reason.clone_from(reason);
        r.limit = *limit;
        r.result.clone_from(result);
        r.num_turns = *num_turns;
        r.duration_ms = *duration_ms;
        r.usage = *usage;
        r.total_cost_usd = *total_cost_usd;
        r.cost_unknown = *cost_unknown;
        r.agent_finished = *agent_finished;
        r.checklist.clone_from(checklist);
        r.finished_at.clone_from(&env.ts);
    }
}

/// A check's result; one that a resumed run ran again replaces its interrupted run (same
/// check, same attempt).
fn record_check(checks: &mut Vec<crate::checks::CheckResult>, c: &crate::checks::CheckResult) {
    let cut = checks
        .iter()
        .position(|k| k.interrupted && k.name == c.name && k.attempt == c.attempt);
    match cut {
        Some(i) => checks[i] = c.clone(),
        None => checks.push(c.clone()),
    }
}

/// `claude -p`'s subtype, with cn-run's for an answer cut or filtered.
fn subtype(status: Status, limit: Option<Limit>, stop_reason: Option<&str>) -> String {
    match (status, stop_reason) {
        (Status::Failed, Some("length")) => "error_max_output_tokens".to_owned(),
        (Status::Failed, Some("content_filter")) => "error_content_filter".to_owned(),
        _ => RunResult::subtype_for(status, limit),
    }
}

/// A `permission.decision` event as a result.json denial.
fn denial(event: &Event) -> Option<Denial> {
    let Event::PermissionDecision {
        turn,
        call_id,
        tool,
        arguments,
        resolution,
        decision,
    } = event
    else {
        return None;
    };
    let text = |v: Value| v.as_str().unwrap_or_default().to_owned();
    Some(Denial {
        turn: *turn,
        call_id: call_id.clone(),
        tool: tool.clone(),
        arguments: arguments.clone(),
        permission: decision.permission.as_str().to_owned(),
        resolution: text(serde_json::to_value(resolution).unwrap_or_default()),
        rule: decision.rule.clone(),
        source: text(serde_json::to_value(decision.source).unwrap_or_default()),
        reason: decision.reason.clone(),
        allow_hint: decision.allow_hint.clone(),
    })
}

fn changes(r: &mut RunResult, c: &Changes) {
    r.patch_path.clone_from(&c.patch_path);
    r.changed_files.clone_from(&c.files);
    r.diff = c.diff;
    r.secret_in_diff = c.secret_in_diff;
    r.checkpoints.clone_from(&c.checkpoints);
    r.skipped.clone_from(&c.skipped);
    r.git_added_bytes = c.git_added_bytes;
}

/// The latest `upload.finished` of each target is result.json's `upload` or
/// `artifacts_upload`.
fn upload(r: &mut RunResult, event: &Event) {
    let Event::UploadFinished {
        target,
        ok,
        status,
        uploads,
        failures,
        last_error,
        last_at,
        ..
    } = event
    else {
        return;
    };
    let s = UploadStatus {
        ok: *ok,
        uploads: *uploads,
        failures: *failures,
        last_status: *status,
        last_error: last_error.clone(),
        last_at: last_at.clone(),
    };
    match target.as_str() {
        "artifacts" => r.artifacts_upload = Some(s),
        _ => r.upload = Some(s),
    }
}

/// Milliseconds from one RFC 3339 time to another (0 when either does not parse).
fn millis_between(from: &str, to: &str) -> u64 {
    match (
        from.parse::<jiff::Timestamp>(),
        to.parse::<jiff::Timestamp>(),
    ) {
        (Ok(a), Ok(b)) => u64::try_from(b.as_millisecond() - a.as_millisecond()).unwrap_or(0),
        _ => 0,
    }
}

/// A sink that feeds a shared [`ResultBuilder`] (the run's live result).
pub type ResultSink = Shared<ResultBuilder>;

impl ResultSink {
    pub fn snapshot(&self) -> RunResult {
        self.lock().result()
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
