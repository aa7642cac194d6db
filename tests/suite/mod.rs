//! The integration suites, grouped by area: one folder per feature, its tests beside each
//! other. A new file goes in the folder of its area (see each folder's mod.rs).

mod checkpoints;
mod codebase;
mod fleet;
mod hooks;
mod job;
mod mcp;
mod outputs;
mod permissions;
mod providers;
mod resume;
mod run;
mod sandbox;
mod schedule;
mod telemetry;
mod tools;

use sandbox::containment_scene;
