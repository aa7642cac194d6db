//! One turn's tool calls: check each against the policy (in order), resolve `ask` by the
//! job's `on_ask` — never by waiting — run the approved calls in parallel, and return the
//! results in call order. Every denial is explained to the model and recorded as an event.

use std::collections::HashSet;
use std::time::Instant;

use futures_util::future::join_all;
use serde_json::Value;

use super::{Agent, Outcome, control_outcome};
use crate::catalog;
use crate::conversation::{ImagePart, Message, ToolCall};
use crate::events::{Event, Resolution, ToolStatus};
use crate::hooks::HookEvent;
use crate::permissions::{Decision, Permission, Source};
use crate::tools::{Grant, Tool, ToolContext, ToolError};

/// Characters of a tool's output copied into its `tool.finished` event.
const EVENT_OUTPUT_CHARS: usize = 16_000;

/// How long a running tool may take to finish by itself once the run is stopped: limits
/// bind within a second.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(700);

/// One call's result: its text, whether it failed, a stop it asks for, and its images.
type Answered = (String, bool, Option<Outcome>, Vec<ImagePart>);

/// The tool results of a turn and whether the run must stop.
pub(super) struct Dispatched {
    pub messages: Vec<Message>,
    pub outcome: Option<Outcome>,
}

/// A call after the checks: either a result already (error, denial) or approved to run.
enum Checked<'t> {
    Done {
        content: String,
        is_error: bool,
    },
    Run {
        tool: &'t dyn Tool,
        args: Value,
        /// What the check judged and lifted, for the run to use exactly that.
        grant: Grant,
        /// The verdict that let it run (for its `tool.started` event).
        decision: Decision,
    },
    /// Held for a person: no result, the call stays open in the history for a resume.
    Deferred,
}

impl Agent<'_> {
    /// Check and run `calls`; ids in `interrupted` are answered as interrupted, not run.
    pub(super) async fn dispatch(
        &self,
        turn: u32,
        calls: &[ToolCall],
        interrupted: &[String],
    ) -> Dispatched {
        // Only a turn that may change files waits for the checkpoints handed in before.
        let mutating = calls.iter().any(|c| {
            let tool = self.tools.get(&c.name);
            tool.is_some_and(|t| t.is_mutating())
        });
        if mutating {
            match self.named_changes(calls) {
                Some(named) => self.hooks.before_named_changes(&named).await,
                None => self.hooks.before_changes().await,
            }
        }
        let mut outcome = None;
        let mut checked = Vec::with_capacity(calls.len());
        let interrupted: HashSet<&str> = interrupted.iter().map(String::as_str).collect();
        let mut deferred = HashSet::new();
        for (i, call) in calls.iter().enumerate() {
            if interrupted.contains(call.id.as_str()) {
                checked.push(done(
                    "This call was running when the previous cn-run process was killed; whether it \
                     took effect is unknown. Check the workspace before repeating it.",
                ));
                continue;
            }
            if outcome.is_none() {
                outcome = self.stopped();
            }
            if outcome.is_some() {
                checked.push(done("Not run: the run stopped before this call."));
                continue;
            }
            if i >= self.config.max_calls {
                checked.push(done(&over_cap(self.config.max_calls, calls.len())));
                continue;
            }
            let (c, stop) = self.check(turn, call).await;
            if matches!(c, Checked::Deferred) {
                deferred.insert(call.id.as_str());
            }
            checked.push(c);
            outcome = stop;
        }
        // Each call is in flight from its `tool.started` event until its result's
        // `message.appended` (a resume answers such a call as interrupted).
        let parallel = checked
            .iter()
            .filter(|c| matches!(c, Checked::Run { .. }))
            .count();
        let runs = calls
            .iter()
            .zip(checked)
            .map(|(call, c)| self.execute(turn, call, c, parallel));
        let (results, changed): (Vec<Answered>, Vec<Option<Value>>) =
            join_all(runs).await.into_iter().unzip();
        let ran = calls.iter().zip(&changed);
        let ran: Vec<_> = ran
            .filter_map(|(c, a)| Some((c.id.as_str(), c.name.as_str(), a.as_ref()?)))
            .collect();
        self.hooks.after_mutations(turn, &ran).await;
        let mut messages = Vec::with_capacity(calls.len());
        for (call, (content, is_error, stop, images)) in calls.iter().zip(results) {
            if outcome.is_none() {
                outcome = stop;
            }
            if deferred.contains(call.id.as_str()) {
                continue;
            }
            messages.push(Message::Tool {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error,
                images,
            });
        }
        Dispatched { messages, outcome }
    }

    /// The turn's calls that may change files, with their arguments, when nothing else
    /// runs in the turn that could (no hook that runs with a call): a checkpointer may then
    /// take what they name instead of waiting. `None` when an argument is not an object.
    fn named_changes(&self, calls: &[ToolCall]) -> Option<Vec<(String, Value)>> {
        let hooked = [
            HookEvent::PreToolUse,
            HookEvent::PostToolUse,
            HookEvent::Notification,
        ];
        if hooked.into_iter().any(|e| self.user_hooks.has(e)) {
            return None;
        }
        calls
            .iter()
            .filter(|c| self.tools.get(&c.name).is_some_and(|t| t.is_mutating()))
            .map(|c| Some((c.name.clone(), parse_arguments(&c.arguments).ok()?)))
            .collect()
    }

    /// Parse, look up and permission-check one call.
    async fn check<'t>(&'t self, turn: u32, call: &ToolCall) -> (Checked<'t>, Option<Outcome>) {
        let mut args = match parse_arguments(&call.arguments) {
            Ok(a) => a,
            Err(msg) => {
                return (
                    Checked::Done {
                        content: msg,
                        is_error: true,
                    },
                    None,
                );
            }
        };
        let Some(tool) = self.tools.get(&call.name) else {
            let mut msg = format!(
                "Unknown tool `{}`. Available tools: {}.",
                call.name,
                self.tools.names().join(", ")
            );
            let offered = |name: &str| self.tools.get(name).is_some();
            msg.push_str(edit_tool_note(
                &call.name,
                offered(catalog::EDIT.name),
                offered(catalog::MULTI_EDIT.name),
            ));
            return (
                Checked::Done {
                    content: msg,
                    is_error: true,
                },
                None,
            );
        };
        if let Some(missing) = missing_required(&tool.spec().parameters, &args) {
            let msg = format!(
                "Required parameter \"{missing}\" is missing for tool {}.",
                call.name
            );
            return (
                Checked::Done {
                    content: msg,
                    is_error: true,
                },
                None,
            );
        }
        let (gated, judged, stop) = self.gate(tool.as_ref(), call, &mut args).await;
        let (decision, resolution) = self.resolve(gated);
        if decision.permission != Permission::Allow {
            self.emitter.emit(Event::PermissionDecision {
                turn,
                call_id: call.id.clone(),
                tool: call.name.clone(),
                arguments: redact_value(&args, self.redactor),
                resolution,
                decision: decision.clone(),
            });
        }
        match resolution {
            Resolution::Allowed => (
                Checked::Run {
                    tool: tool.as_ref(),
                    args,
                    grant: Grant::of_allowed(judged),
                    decision,
                },
                stop,
            ),
            Resolution::Denied => (
                Checked::Done {
                    content: denial_text(&call.name, &decision),
                    is_error: true,
                },
                stop,
            ),
            Resolution::Deferred => {
                let reason = format!(
                    "{} call {} waits for approval ({}); resume with --approve {} or --deny {}",
                    call.name, call.id, decision.reason, call.id, call.id
                );
                self.notify_person(&call.name).await;
                (Checked::Deferred, Some(Outcome::ApprovalRequired(reason)))
            }
            Resolution::Failed => {
                self.notify_person(&call.name).await;
                let reason = format!(
                    "{} needed approval ({}) and the job says on_ask: fail",
                    call.name, decision.reason
                );
                let content = format!(
                    "{}\nThe run stops here.",
                    denial_text(&call.name, &decision)
                );
                (
                    Checked::Done {
                        content,
                        is_error: true,
                    },
                    Some(Outcome::ApprovalRequired(reason)),
                )
            }
        }
    }

    /// The refusal of a call that would send a registered secret out (plain, reversed,
    /// URL-encoded, hex or base64): no rule or mode can allow it.
    pub(super) fn egress_refusal(
        &self,
        tool: &dyn Tool,
        name: &str,
        args: &Value,
    ) -> Option<Decision> {
        if !tool.sends_out() {
            return None;
        }
        let form = self.redactor.leak(&args.to_string())?;
        Some(Decision {
            permission: Permission::Exclude,
            rule: Some("secret.egress".to_owned()),
            source: Source::Tool,
            reason: format!(
                "the {name} call's arguments carry the value of a registered secret ({}); \
                 nothing secret may leave the machine by a tool",
                form.describe()
            ),
            allow_hint: None,
        })
    }

    /// Runs `tool`; once the run is told to stop (timeout, signal), the tool has
    /// [`STOP_GRACE`] to finish on its own (Bash kills its process group and reports), then it
    /// is abandoned, so no tool — one blocked in a system call included — can hold a stopped
    /// run.
    async fn run_stoppable(
        &self,
        tool: &dyn Tool,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<crate::tools::ToolOutput, ToolError> {
        let run = tool.run(args, ctx);
        tokio::pin!(run);
        tokio::select! {
            biased;
            result = &mut run => result,
            () = self.shared.cancel.cancelled() => {
                match tokio::time::timeout(STOP_GRACE, &mut run).await {
                    Ok(result) => result,
                    Err(_) => Err(ToolError::RespondToModel(format!(
                        "The run was stopped while {} was still running; the call was \
                         abandoned after {} s.",
                        tool.name(),
                        STOP_GRACE.as_secs()
                    ))),
                }
            }
        }
    }

    /// Run one approved call (or pass a prepared result through), with its events; and
    /// the arguments of a call that may have changed files, once it ran (for its
    /// checkpoint, handed in when the turn is done).
    async fn execute(
        &self,
        turn: u32,
        call: &ToolCall,
        checked: Checked<'_>,
        parallel: usize,
    ) -> (Answered, Option<Value>) {
        let (tool, args, grant, decision) = match checked {
            Checked::Done { content, is_error } => {
                return (self.answer(turn, call, content, is_error), None);
            }
            Checked::Deferred => return ((String::new(), true, None, Vec::new()), None),
            Checked::Run { .. } if self.stop.is_stopped() => {
                let content = "Not run: the run stopped before this call.".to_owned();
                return (self.answer(turn, call, content, true), None);
            }
            Checked::Run {
                tool,
                args,
                grant,
                decision,
            } => (tool, args, grant, decision),
        };
        self.emitter.emit(Event::ToolStarted {
            turn,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: redact_value(&args, self.redactor),
            decision: Some(decision),
        });
        // A start the run's files could not record stops the run here: a call runs only
        // once a resume would know it started.
        if let Some(crate::agent::StopCause::Environment(why)) = self.stop.cause() {
            return (
                self.answer(turn, call, format!("Not run: {why}."), true),
                None,
            );
        }
        let ctx = ToolContext {
            shared: self.shared.clone(),
            parallel_calls: parallel.max(1),
            call_id: call.id.clone(),
            grant,
        };
        let started = Instant::now();
        // A mutating call's arguments name what it changed (for its checkpoint).
        let kept_args = tool.is_mutating().then(|| args.clone());
        let post_args = self
            .user_hooks
            .has(HookEvent::PostToolUse)
            .then(|| args.clone());
        let result = self.run_stoppable(tool, args, &ctx).await;
        let ms = started.elapsed().as_millis() as u64;
        let (content, is_error, control, images) = match result {
            Ok(out) => (
                out.content,
                false,
                out.control.as_ref().map(control_outcome),
                out.images,
            ),
            Err(ToolError::RespondToModel(msg)) => (msg, true, None, Vec::new()),
            Err(ToolError::Fatal(msg)) => {
                let content = format!("The tool could not run: {msg}");
                self.finished(turn, call, ToolStatus::Error, &content, ms);
                self.record(turn, call, &content, true, &[]).await;
                let answered = (content, true, Some(Outcome::Internal(msg)), Vec::new());
                return (answered, kept_args);
            }
        };
        let (content, control) = match post_args {
            Some(args) => {
                self.after_tool_hooks(call, &args, content, is_error, control)
                    .await
            }
            None => (content, control),
        };
        let (content, mut images) = self.screen_images(content, images);
        let content = self
            .config
            .trust
            .mark(&call.name, self.redactor.redact(&content).into_owned());
        for (n, image) in images.iter_mut().enumerate() {
            image.marker = self.config.trust.image_marker(&call.name, n + 1);
        }
        let status = if is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        };
        self.finished(turn, call, status, &content, ms);
        self.record(turn, call, &content, is_error, &images).await;
        ((content, is_error, control, images), kept_args)
    }

    /// A call answered without running: its events.
    fn answer(&self, turn: u32, call: &ToolCall, content: String, is_error: bool) -> Answered {
        let status = if is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        };
        self.finished(turn, call, status, &content, 0);
        self.result_appended(call, &content, is_error, &[]);
        (content, is_error, None, Vec::new())
    }

    /// An image whose bytes spell a registered secret (base64 at any alignment) does not
    /// go to the model: a note naming its type and size stands in its place.
    fn screen_images(
        &self,
        mut content: String,
        images: Vec<ImagePart>,
    ) -> (String, Vec<ImagePart>) {
        let images = images
            .into_iter()
            .filter(|image| {
                let secret = self.redactor.finds_secret(&image.data);
                if secret {
                    content.push('\n');
                    content
                        .push_str(&image.placeholder("it holds the value of a registered secret"));
                }
                !secret
            })
            .collect();
        (content, images)
    }

    /// The call's whole result on the event stream (the session log takes it from there),
    /// then the hooks told. Once the run is stopped nothing may delay the end.
    async fn record(
        &self,
        turn: u32,
        call: &ToolCall,
        content: &str,
        is_error: bool,
        images: &[ImagePart],
    ) {
        self.result_appended(call, content, is_error, images);
        if !self.stop.is_stopped() {
            self.hooks.tool_finished(turn, &call.id).await;
        }
    }

    /// A call's result joins the conversation: the loop adds the turn's results to the
    /// history together, in the order of the calls; the event comes as each is known.
    fn result_appended(
        &self,
        call: &ToolCall,
        content: &str,
        is_error: bool,
        images: &[ImagePart],
    ) {
        self.emitter.emit(Event::MessageAppended {
            message: Message::Tool {
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                content: content.to_owned(),
                is_error,
                images: images.to_vec(),
            },
        });
    }

    fn finished(&self, turn: u32, call: &ToolCall, status: ToolStatus, content: &str, ms: u64) {
        let output = if content.len() > EVENT_OUTPUT_CHARS {
            let mut cut = EVENT_OUTPUT_CHARS;
            while !content.is_char_boundary(cut) {
                cut -= 1;
            }
            format!(
                "{}\n[… {} more bytes in the session file]",
                &content[..cut],
                content.len() - cut
            )
        } else {
            content.to_owned()
        };
        self.emitter.emit(Event::ToolFinished {
            turn,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            status,
            output,
            duration_ms: ms,
        });
    }
}

/// A call answered without running.
fn done(content: &str) -> Checked<'static> {
    Checked::Done {
        content: content.to_owned(),
        is_error: true,
    }
}

/// The result of a call past the cap on calls per response.
fn over_cap(cap: usize, total: usize) -> String {
    format!(
        "Not run: this response made {total} tool calls and at most {cap} run per response \
         (limits.max_calls_per_response). Make fewer calls per response."
    )
}

/// The tool result a denied call gets: what denied it, why, and how a job would allow it.
fn denial_text(tool: &str, d: &Decision) -> String {
    let rule = d
        .rule
        .as_deref()
        .map_or_else(|| "no rule matched".to_owned(), |r| format!("rule `{r}`"));
    let mut text = format!(
        "Permission denied: the {tool} call was not run. Decided by {rule} (source: {}). Reason: {}.",
        serde_json::to_value(d.source)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        d.reason.trim_end_matches('.'),
    );
    if let Some(hint) = &d.allow_hint
        && d.permission == Permission::Ask
    {
        text.push_str(&format!(
            " A job can allow it with `permissions: {{allow: [\"{hint}\"]}}`."
        ));
    }
    text.push_str(" Do not retry the same call; find another way or explain in your answer.");
    text
}

/// Parse the model's argument text; empty means no arguments.
fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("Tool arguments must be a JSON object.".to_owned()),
        Err(e) => Err(format!(
            "Tool arguments are not valid JSON ({e}). Send a JSON object."
        )),
    }
}

/// The first required parameter that is absent or null.
fn missing_required(schema: &Value, args: &Value) -> Option<String> {
    schema
        .get("required")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find_map(|name| match args.get(name) {
            None | Some(Value::Null) => Some(name.to_owned()),
            _ => None,
        })
}

/// Arguments with secret values masked, for events and results.
fn redact_value(v: &Value, redactor: &crate::redact::Redactor) -> Value {
    if redactor.is_empty() {
        return v.clone();
    }
    let text = v.to_string();
    serde_json::from_str(&redactor.redact(&text)).unwrap_or_else(|_| v.clone())
}

/// Which of Edit and MultiEdit a run offers depends on the model name (as in Continue); a
/// call of the other one is told how to use the one there is.
fn edit_tool_note(called: &str, edit: bool, multi_edit: bool) -> &'static str {
    if called == catalog::EDIT.name && !edit && multi_edit {
        " This run edits files with `MultiEdit` instead of `Edit` (the model name decides \
         which one a run offers): call MultiEdit with `file_path` and \
         `edits: [{old_string, new_string, replace_all}]`."
    } else if called == catalog::MULTI_EDIT.name && edit && !multi_edit {
        " This run edits files with `Edit` instead of `MultiEdit` (the model name decides \
         which one a run offers): call Edit with `file_path`, `old_string`, `new_string` \
         and optionally `replace_all`, once per change."
    } else {
        ""
    }
}
