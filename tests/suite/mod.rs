//! The integration suites, one file per area.

mod checkpoint;
mod checkpoint_e2e;
mod checks_e2e;
mod ci_outputs;
mod command_safety;
mod compaction_e2e;
mod edit_match;
mod example_jobs;
mod job_file;
mod mcp;
mod mcp_e2e;
mod openai_e2e;
mod permissions;
mod permissions_e2e;
mod provider_anthropic;
mod provider_openai;
mod provider_script;
mod run_e2e;
mod schemas;
mod session_resume;
mod skills;
mod tools_artifacts;
mod tools_background;
mod tools_edit;
mod tools_fetch;
mod tools_search;
