//! Outputs that fold the events into a file of their own in the run folder, one row each
//! in [`FILE_OUTPUTS`]: each row makes the output for a run (or none), the output gets
//! every event the run emits (a resumed run's earlier ones first), and its file is written
//! whole through the run's writer when the run ends — a file that cannot be written makes
//! the run exit 6 naming it, like result.json. Adding such an output is its fold (a file in
//! `report/`) and one row here; nothing else names it (test: `app::new_output_tests`).

use super::run_files::RunFiles;
use crate::config::RunConfig;
use crate::events::{Emitter, Envelope, EventSink, Shared};

/// A fold over the events that ends as one file of the run folder.
pub(crate) trait FileOutput: EventSink {
    /// The file's name in the run folder.
    fn file_name(&self) -> &'static str;
    /// The file's content once the run has ended (None: this run writes none).
    fn render(&self) -> Option<Vec<u8>>;
}

/// Makes the output for a run of `config`, or None when the run does not write it.
pub(crate) type NewOutput = fn(&RunConfig) -> Option<Box<dyn FileOutput>>;

/// Every output that writes a file of its own.
pub(crate) const FILE_OUTPUTS: &[NewOutput] = &[
    #[cfg(test)]
    crate::report::probe_output::new,
];

/// An output attached to a run: fed by the emitter, read when the run ends.
pub(crate) type Attached = Shared<Box<dyn FileOutput>>;

/// The run's file outputs, attached to `emitter` after being fed `earlier` (a resumed
/// run's events so far, read only when there is an output). An earlier run's file of the same name goes first, so none can
/// stand for this run's (one that cannot be removed fails when this run writes its own).
pub(crate) fn attach(
    config: &RunConfig,
    out_dir: &std::path::Path,
    emitter: &Emitter,
    earlier: impl FnOnce() -> Vec<Envelope>,
) -> Vec<Attached> {
    let mut attached = Vec::new();
    let mut earlier = Some(earlier);
    let mut seen = Vec::new();
    for mut output in FILE_OUTPUTS.iter().filter_map(|new| new(config)) {
        if let Some(read) = earlier.take() {
            seen = read();
        }
        let _ = std::fs::remove_file(out_dir.join(output.file_name()));
        seen.iter().for_each(|e| output.on_event(e));
        let shared = Attached::new(output);
        emitter.add_sink(Box::new(shared.clone()));
        attached.push(shared);
    }
    attached
}

/// Writes each output's file; false when one could not be written (kept in `files`).
pub(crate) fn write(outputs: &[Attached], files: &RunFiles) -> bool {
    let mut all = true;
    for output in outputs {
        let output = output.lock();
        if let Some(bytes) = output.render() {
            all &= files.write_whole(output.file_name(), &[&bytes]);
        }
    }
    all
}
