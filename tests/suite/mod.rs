//! The integration suites, one file per area.

mod command_safety;
mod edit_match;
mod permissions;
mod provider_anthropic;
mod provider_openai;
mod provider_script;
mod run_e2e;
mod job_file;
mod permissions_e2e;
mod checks_e2e;
mod tools_artifacts;
mod tools_background;
mod tools_edit;
mod tools_fetch;
mod tools_search;
mod checkpoint;
mod session_resume;
mod ci_outputs;
mod mcp;
mod skills;
