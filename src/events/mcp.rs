//! How an MCP server's start went, as the `mcp.server` event and result.json carry it, and
//! the level of a server's log notification.
//!
//! Owned here so the event schema needs nothing from `mcp` (which emits events: the two
//! modules named each other); `mcp` re-exports these.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Event;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Stdio,
    Http,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    Ready,
    Failed,
}

impl ServerState {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Ready => "ready",
            ServerState::Failed => "failed",
        }
    }
}

/// How a server's start went, for result.json and the `mcp.server` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerStatus {
    pub name: String,
    pub transport: TransportKind,
    pub status: ServerState,
    /// How many tools it offers (0 when it failed).
    pub tools: usize,
    /// Why it failed, or a remark about a server that started (e.g. it offers no tools).
    pub message: Option<String>,
    /// From spawn (or first request) to its tool list.
    pub startup_ms: u64,
}

impl ServerStatus {
    /// The `mcp.server` event for this status.
    pub fn to_event(&self) -> Event {
        Event::McpServer(self.clone())
    }
}

/// A server's log level (the MCP specification's eight, RFC 5424's severities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}
