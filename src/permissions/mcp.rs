//! MCP tools under least privilege. The policy is assembled before the servers start, so the
//! rules that depend on what a server says of its tools are added once they have listed them:
//! a tool declared read-only gets a default allow rule; plan mode (and `--readonly`) excludes
//! every other one; untrusted mode asks for every other one unless a rule names it exactly.
//!
//! Annotations are the server's own hints, not proofs: a job that distrusts a server excludes
//! or asks for its tools by name (`exclude: [mcp__srv__*]`), which wins over these defaults.

use serde_json::Value;

use super::defaults::MCP_TOOLS;
use super::policy::Policy;
use super::types::Rule;
use super::types::{Mode, Permission, Source};

/// What the policy needs to know of one MCP tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToolHints {
    /// The exposed name, `mcp__<server>__<tool>`.
    pub name: String,
    /// The server annotates it `readOnlyHint: true`.
    pub read_only: bool,
    /// The server does not annotate it `openWorldHint: false` (the protocol's default is true:
    /// the tool may reach beyond the server, e.g. the web).
    pub open_world: bool,
}

impl McpToolHints {
    /// Allowed by default: declared read-only, and in untrusted mode also closed-world.
    pub fn allowed_by_default(&self, untrusted: bool) -> bool {
        self.read_only && !(untrusted && self.open_world)
    }
}

impl Policy {
    /// This policy with the rules for the run's MCP tools added (see the module comment).
    pub fn with_mcp_tools(&self, tools: &[McpToolHints], untrusted: bool) -> Policy {
        let mut policy = self.clone();
        let defaults_start = policy
            .rules
            .iter()
            .position(|r| r.source == Source::Default && r.text == MCP_TOOLS)
            .unwrap_or(policy.rules.len());
        let allows: Vec<Rule> = tools
            .iter()
            .filter(|t| t.allowed_by_default(untrusted))
            .filter_map(|t| policy.added(&t.name, Permission::Allow, Source::Default))
            .collect();
        policy.rules.splice(defaults_start..defaults_start, allows);
        let first: Vec<Rule> = tools
            .iter()
            .filter(|t| !t.allowed_by_default(untrusted))
            .filter_map(|t| policy.mode_rule(t, untrusted))
            .collect();
        policy.rules.splice(0..0, first);
        policy
    }

    /// The rule the mode puts in front of every other for a tool not allowed by default:
    /// plan mode excludes a tool that may write; untrusted mode asks for one that a rule
    /// would allow without naming it (`*`, `mcp__*`).
    fn mode_rule(&self, tool: &McpToolHints, untrusted: bool) -> Option<Rule> {
        if self.mode() == Mode::Plan && !tool.read_only {
            return self.added(&tool.name, Permission::Exclude, Source::Mode);
        }
        let allowed = self.check(&tool.name, &Value::Null, None).permission == Permission::Allow;
        (untrusted && allowed && !self.names_exactly(&tool.name))
            .then(|| self.added(&tool.name, Permission::Ask, Source::Mode))
            .flatten()
    }

    /// Whether a rule of the command line, the job or the repository names `tool` itself.
    fn names_exactly(&self, tool: &str) -> bool {
        self.rules.iter().any(|r| {
            matches!(r.source, Source::Cli | Source::Job | Source::RepoFile) && r.text == tool
        })
    }

    fn added(&self, name: &str, permission: Permission, source: Source) -> Option<Rule> {
        Rule::added(name, permission, source, &self.ws).ok()
    }
}
