//! MCP servers: start, tools, notifications, images, policy, the reference servers.

#[allow(clippy::module_inception)]
mod mcp;
pub(super) mod mcp_e2e;
mod mcp_egress_e2e;
mod mcp_env_e2e;
mod mcp_expand_e2e;
mod mcp_image_context_e2e;
mod mcp_images_e2e;
mod mcp_notify_e2e;
mod mcp_paths_e2e;
mod mcp_policy_e2e;
mod mcp_reference;
mod mcp_reference_writes;
mod mcp_task_only_http;

use super::permissions::secrets_e2e;
