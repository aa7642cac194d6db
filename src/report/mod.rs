//! Outputs of a run, each a translator fed by events: result.json, events.jsonl, and the
//! stdout formats (`text`, `json`, `stream-json`).

pub mod atif;
pub mod clean;
pub mod fold;
pub mod github;
pub mod html;
pub mod jsonl;
pub mod junit;
pub mod live;
#[cfg(test)]
pub(crate) mod probe_output;
pub mod progress;
pub mod rebuild;
pub mod result;
pub mod transcript;

pub use fold::{ResultBuilder, ResultSink, fold};
pub use jsonl::{JsonlSink, StreamJsonSink};
pub use result::{Denial, DiffStat, RunResult};
