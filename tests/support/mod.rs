//! Shared helpers for the integration suite: temp workspaces, the binary runner, local servers.
#![allow(dead_code, unreachable_pub)]
pub mod cron_ref;
pub mod fleet_tools;
pub mod http;
pub mod live;
pub mod model;
pub mod mounts;
pub mod otlp;
pub mod outputs_replay;
pub mod ports;
pub mod procs;
pub mod replay;
pub mod runner;
pub mod sse;
pub mod strict;
pub mod typed;
