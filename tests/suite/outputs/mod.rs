//! What a run leaves behind: result.json, events, JUnit, reports, ATIF, CI outputs, uploads.

mod action_step;
mod atif_e2e;
mod ci_outputs;
mod claude_shape;
pub(super) mod junit_shape;
mod report_e2e;
mod report_html_e2e;
mod report_html_parts_e2e;
mod run_files_e2e;
mod typed_readers;
mod upload;

use super::mcp::mcp_e2e;
