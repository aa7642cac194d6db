//! `cn-run explain` for MCP servers: start the job's servers as a run would (same minimal
//! environment, same timeouts), list each one's transport and tools with their annotations
//! and the verdict the policy gives each, then stop them. A server that fails is listed with
//! its reason instead of failing the command.

use std::path::Path;

use serde_json::{Value, json};

use crate::job::Job;
use crate::mcp::{McpHub, ServerStatus};
use crate::permissions::Policy;

/// Why the servers cannot be listed (a server that fails to start is listed, not this).
#[derive(Debug, thiserror::Error)]
pub(super) enum ExplainMcpError {
    #[error(transparent)]
    Config(#[from] crate::run::extensions::McpConfigError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The servers as given cannot be started together (a duplicate or empty name).
    #[error(transparent)]
    Servers(#[from] crate::mcp::McpError),
}

/// The policy with the servers' MCP rules added, and one JSON row per server.
pub(super) fn explain_servers(
    job: &Job,
    workspace: &Path,
    policy: Policy,
) -> Result<(Policy, Vec<Value>), ExplainMcpError> {
    if job.mcp_servers.is_empty() {
        return Ok((policy, Vec::new()));
    }
    let mut configs = crate::run::extensions::mcp_configs(job, workspace)?;
    for config in &mut configs {
        config.optional = true;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ExplainMcpError::Runtime)?;
    let base_env: Vec<(String, String)> = std::env::vars().collect();
    runtime.block_on(async {
        let (hub, statuses) = McpHub::start(configs, &base_env).await?;
        let policy = crate::run::extensions::mcp_policy(&hub, &policy, false);
        let rows = statuses
            .iter()
            .map(|s| server_row(s, &hub, &policy))
            .collect();
        hub.shutdown().await;
        Ok((policy, rows))
    })
}

fn server_row(status: &ServerStatus, hub: &McpHub, policy: &Policy) -> Value {
    let tools: Vec<Value> = hub
        .mcp_tools()
        .iter()
        .filter(|t| t.server() == status.name)
        .map(|t| {
            let name = crate::tools::Tool::name(t.as_ref());
            let decision = policy.check(name, &json!({}), None);
            json!({
                "name": name,
                "remote_name": t.remote_name(),
                "annotations": t.hints(),
                "verdict": decision.permission.as_str(),
                "offered": policy.is_offered(name),
                "reason": decision.reason,
                "allow_hint": decision.allow_hint,
            })
        })
        .collect();
    json!({
        "name": status.name,
        "transport": status.transport,
        "status": status.status,
        "message": status.message,
        "tools": tools,
    })
}

/// The servers as text for the table view.
pub(super) fn servers_text(rows: &[Value]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "mcp servers (annotations are the server's hints; a rule naming a tool overrides them):\n",
    );
    for row in rows {
        let s = |key: &str| row[key].as_str().unwrap_or("").to_owned();
        text.push_str(&format!(
            "  {} ({}, {})",
            s("name"),
            s("transport"),
            s("status")
        ));
        match row["message"].as_str() {
            Some(m) => text.push_str(&format!(": {m}\n")),
            None => text.push('\n'),
        }
        for tool in row["tools"].as_array().into_iter().flatten() {
            text.push_str(&tool_line(tool));
        }
    }
    text
}

fn tool_line(tool: &Value) -> String {
    let hints: Vec<String> = tool["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let hints = if hints.is_empty() {
        "no annotations".to_owned()
    } else {
        hints.join(" ")
    };
    let verdict = tool["verdict"].as_str().unwrap_or("");
    let offered = if tool["offered"] == true {
        ""
    } else {
        " (not offered)"
    };
    let allow = tool["allow_hint"]
        .as_str()
        .map(|h| format!("; allow with `{h}`"))
        .unwrap_or_default();
    format!(
        "    {:<40} {verdict:<8} {hints}{offered}{allow}\n",
        tool["name"].as_str().unwrap_or("")
    )
}
