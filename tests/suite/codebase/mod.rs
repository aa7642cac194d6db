//! The code itself: module graph, properties, fuzz regressions.

mod file_writers;
mod fuzz_regressions;
mod module_graph;
mod properties;
mod resolved_once;
