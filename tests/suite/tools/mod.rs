//! cn-run's own tools: read, edit, search, fetch, artifacts, skills, subagents.

mod edit_match;
mod fetch_local;
mod read_limits_e2e;
mod skills;
mod subagents_e2e;
mod tools_artifacts;
mod tools_background;
mod tools_edit;
mod tools_fetch;
mod tools_search;
mod tools_view;
mod tools_view_e2e;

use super::sandbox::resources;
