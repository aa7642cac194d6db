//! One tool of an MCP server, offered to the model as `mcp__<server>__<tool>`.
//!
//! A call is forwarded with a time limit and the run's cancellation; whatever goes wrong
//! (an error result, a server that died, no answer in time) becomes a tool result the model
//! can read, never the end of the run.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, RequestParamsMeta as _,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde::Serialize;
use serde_json::Value;

use super::child::StderrTail;
use super::words::error_words;
use crate::conversation::ToolSpec;
use crate::permissions::McpToolHints;
use crate::permissions::{Permission, Tighten};
use crate::tools::{Catalogued, Judged, Tool, ToolContext, ToolError, ToolOutput, ToolShared};

/// Characters of one result shown to the model at most (before dividing among parallel calls).
const MAX_RESULT_CHARS: usize = 100_000;

/// What the server says of a tool (`annotations`); hints, not guarantees.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolHints {
    #[serde(rename = "readOnlyHint", skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(rename = "destructiveHint", skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(rename = "idempotentHint", skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    #[serde(rename = "openWorldHint", skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolHints {
    fn of(tool: &rmcp::model::Tool) -> Self {
        let Some(a) = tool.annotations.as_ref() else {
            return ToolHints::default();
        };
        ToolHints {
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
            idempotent: a.idempotent_hint,
            open_world: a.open_world_hint,
        }
    }
}

pub struct McpTool {
    spec: ToolSpec,
    server: String,
    /// The tool's name on its server (the exposed name may be sanitised or shortened).
    remote_name: String,
    hints: ToolHints,
    call_timeout: Duration,
    peer: Peer<RoleClient>,
    /// The server's last stderr lines, logged when it stops answering.
    stderr: StderrTail,
    /// Where the progress of this tool's calls is recorded.
    notices: std::sync::Arc<super::notices::Notices>,
    /// The run's trace: each call passes its trace context to the server.
    trace: Option<crate::telemetry::RunTrace>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("server", &self.server)
            .field("remote_name", &self.remote_name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    pub(crate) fn new(
        exposed: String,
        server: &str,
        tool: &rmcp::model::Tool,
        call_timeout: Duration,
        peer: Peer<RoleClient>,
        stderr: StderrTail,
        notices: std::sync::Arc<super::notices::Notices>,
    ) -> Self {
        let description = match tool.description.as_deref() {
            Some(d) if !d.trim().is_empty() => d.to_owned(),
            _ => format!("Tool `{}` of the MCP server \"{server}\".", tool.name),
        };
        McpTool {
            spec: ToolSpec {
                name: exposed,
                description,
                parameters: object_schema(&tool.input_schema),
            },
            server: server.to_owned(),
            remote_name: tool.name.to_string(),
            hints: ToolHints::of(tool),
            call_timeout,
            peer,
            stderr,
            notices,
            trace: None,
        }
    }

    /// This tool in a run's trace.
    pub(crate) fn traced(mut self, trace: Option<crate::telemetry::RunTrace>) -> Self {
        self.trace = trace;
        self
    }

    /// The server this tool belongs to (its name in the job).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tool's own name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    /// The server's annotations of the tool.
    pub fn hints(&self) -> &ToolHints {
        &self.hints
    }

    /// What the permission policy needs to know of this tool.
    pub fn policy_hints(&self) -> McpToolHints {
        McpToolHints {
            name: self.spec.name.clone(),
            read_only: self.hints.read_only == Some(true),
            open_world: self.hints.open_world != Some(false),
        }
    }

    async fn call(&self, args: Value, call_id: &str) -> Result<CallToolResult, ToolError> {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(ToolError::RespondToModel(format!(
                    "The arguments of {} must be a JSON object, got {other}",
                    self.spec.name
                )));
            }
        };
        let mut params =
            CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        // The MCP trace-context convention (SEP-414): the server's spans join the run's.
        if let Some((parent, state)) = self.trace.as_ref().and_then(|t| t.for_mcp_call(call_id)) {
            params.set_traceparent(&parent);
            if let Some(state) = state {
                params.set_tracestate(&state);
            }
        }
        // call_timeout is the longest silence: each progress notification of the call
        // restarts it (the SDK sends a progress token with the request).
        let options =
            PeerRequestOptions::with_timeout(self.call_timeout).reset_timeout_on_progress();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let answer = match self.peer.send_request_with_option(request, options).await {
            Ok(handle) => {
                let token = handle.progress_token.clone();
                self.notices.track(&token, call_id);
                let answer = handle.await_response().await;
                self.notices.untrack(&token);
                answer
            }
            Err(e) => Err(e),
        };
        match answer {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err(ToolError::RespondToModel(format!(
                "The MCP server \"{}\" answered the call to `{}` with something other than a \
                 tool result.",
                self.server, self.remote_name
            ))),
            Err(ServiceError::Timeout { .. }) => Err(ToolError::RespondToModel(format!(
                "The MCP server \"{}\" did not answer the call to `{}` within {} s (and sent no \
                 progress for that long); the call was cancelled.",
                self.server,
                self.remote_name,
                self.call_timeout.as_secs_f64()
            ))),
            Err(e) => Err(ToolError::RespondToModel(self.service_error(&e))),
        }
    }

    fn service_error(&self, e: &ServiceError) -> String {
        let (server, tool) = (&self.server, &self.remote_name);
        match e {
            ServiceError::McpError(data) if data.code.0 == super::line_guard::TOO_LARGE_CODE => {
                format!(
                    "The answer of the MCP server \"{server}\" to `{tool}` was too large: {}",
                    data.message
                )
            }
            ServiceError::McpError(data) => {
                format!(
                    "The MCP server \"{server}\" rejected the call to `{tool}`: {}",
                    data.message
                )
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let words = error_words(e);
                tracing::warn!(server = %server, "MCP server unreachable: {words}{}", self.stderr.note(5));
                format!(
                    "The MCP server \"{server}\" can no longer be reached ({words}); its tools will \
                     not work for the rest of this run."
                )
            }
            other => format!(
                "The call to `{tool}` on the MCP server \"{server}\" failed: {}",
                error_words(other)
            ),
        }
    }
}

/// An MCP server's tool describes itself (its spec comes from the server).
impl Catalogued for McpTool {}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    /// A server tool may change the workspace unless it says it only reads.
    fn sends_out(&self) -> bool {
        true
    }

    fn is_mutating(&self) -> bool {
        self.hints.read_only != Some(true)
    }

    /// The path rules of the built-in tools, for the arguments that name files
    /// (`path_args`): a tool that may write is bound as Write is (outside the workspace,
    /// `.git`, credential files need permission); a read-only one as Read is (credential
    /// files need permission).
    fn judge(&self, args: &Value, shared: &ToolShared) -> Judged {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let paths = super::path_args::named_paths(args, home.as_deref());
        let tighten = paths.iter().find_map(|raw| {
            if self.is_mutating() {
                return crate::tools::path_tighten(raw, shared);
            }
            let path = crate::tools::resolve_in_workspace(&shared.workspace, raw);
            crate::tools::is_sensitive_path(&path.real).then(|| Tighten {
                permission: Permission::Ask,
                rule: "tool.sensitive_file",
                reason: format!("{raw} looks like a credential file"),
            })
        });
        Judged {
            tighten,
            ..Judged::default()
        }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let result = tokio::select! {
            r = self.call(args, &ctx.call_id) => r?,
            _ = ctx.shared.cancel.cancelled() => {
                return Err(ToolError::RespondToModel(format!(
                    "The call to {} was stopped: the run is ending.", self.spec.name
                )));
            }
        };
        let max_chars = MAX_RESULT_CHARS / ctx.parallel_calls.max(1);
        let rendered = super::content::render(&result);
        let text = bounded(rendered.text, max_chars);
        if result.is_error == Some(true) {
            return Err(ToolError::RespondToModel(format!(
                "{} (tool `{}` of the MCP server \"{}\") reported an error: {text}",
                self.spec.name, self.remote_name, self.server
            )));
        }
        Ok(ToolOutput {
            images: rendered.images,
            ..ToolOutput::text(text)
        })
    }
}

/// The tool's input schema, made a JSON-Schema object as the providers require (some of
/// them reject a `$schema` key, so it goes).
fn object_schema(schema: &serde_json::Map<String, Value>) -> Value {
    let mut schema = schema.clone();
    schema.remove("$schema");
    schema.insert("type".into(), Value::String("object".into()));
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    Value::Object(schema)
}

/// The first `max_chars` characters of `text`, with a note when the rest was cut.
fn bounded(text: String, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text,
        Some((at, _)) => {
            let total = text.chars().count();
            format!(
                "{}\n[result truncated: {} of {total} characters not shown]",
                &text[..at],
                total - max_chars
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_without_type_becomes_an_object() {
        let schema = serde_json::Map::new();
        assert_eq!(
            object_schema(&schema),
            serde_json::json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn long_results_are_cut_with_a_note() {
        let out = bounded("é".repeat(50), 10);
        assert!(out.starts_with(&"é".repeat(10)));
        assert!(out.contains("40 of 50 characters not shown"));
        assert_eq!(bounded("short".into(), 10), "short");
    }
}
