//! cn-run: a headless runner for LLM coding agents in CI.
//!
//! A YAML job file goes in; the agent loop runs with nobody watching; a JSON result, a JSONL
//! event stream, a JUnit report, git checkpoints and a resumable session come out.
//!
//! Layout: `job` (the file), `permissions` and `command_safety` (the policy), `provider`
//! (models), `tools`, `agent` (the loop), `events` and `report` (every output), `app` (the
//! composition root), `cli`.
#![deny(clippy::print_stdout)]

pub mod agent;
pub mod app;
pub mod append_log;
pub mod artifacts;
pub mod catalog;
pub mod checkpoint;
pub mod checks;
pub mod cli;
pub mod command_safety;
pub mod config;
pub mod context;
pub mod conversation;
pub mod edit;
pub mod events;
pub mod exit_code;
pub mod export;
pub mod git_guard;
pub mod hooks;
pub mod job;
pub mod json_schema;
pub mod mcp;
mod nofollow;
pub mod observability;
mod out_file;
pub mod permissions;
pub mod provider;
pub mod redact;
pub mod repo_files;
pub mod report;
pub mod rules;
pub mod run;
mod safe_name;
pub mod sandbox;
pub mod schedule;
pub mod secret;
pub mod session;
pub mod skills;
pub mod store;
pub mod structured;
pub mod telemetry;
#[cfg(test)]
mod test_git;
pub mod tools;
pub mod untrusted;
pub mod upload;
pub mod worktree;
pub mod worktree_prune;
