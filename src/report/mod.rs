//! Outputs of a run, each a translator fed by events: result.json, events.jsonl, and the
//! stdout formats (`text`, `json`, `stream-json`).

pub mod clean;
pub mod github;
pub mod jsonl;
pub mod junit;
pub mod live;
pub mod progress;
pub mod result;

pub use jsonl::{JsonlSink, StreamJsonSink};
pub use result::{Denial, DiffStat, ResultBuilder, ResultSink, RunResult};
