//! A run is decided once: `RunConfig::resolve` turns the command line and the job into the
//! run's configuration, and from there the run (`src/run/`) reads only that. No file of
//! the run names the command line's types (`RunArgs`, the flags as given in
//! `config::Settings`), so a flag cannot be read, or changed, after it was resolved; and
//! `RunConfig`'s fields are private to `src/config/` (only its accessors are public).

use std::path::Path;

use crate::support::runner::repo_root;

fn run_files(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            run_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.display().to_string(), text));
        }
    }
}

/// Whether `text` names the command line's types.
fn names_the_flags(text: &str) -> bool {
    let grouped = text.match_indices("crate::config::{").any(|(i, _)| {
        let group = &text[i..];
        group[..group.find('}').unwrap_or(group.len())].contains("Settings")
    });
    text.contains("RunArgs") || text.contains("config::Settings") || grouped
}

#[test]
fn the_run_never_names_the_command_line() {
    let mut files = Vec::new();
    run_files(&repo_root().join("src/run"), &mut files);
    let naming: Vec<&String> = files
        .iter()
        .filter(|(_, text)| names_the_flags(text))
        .map(|(path, _)| path)
        .collect();
    assert!(
        naming.is_empty(),
        "read the resolved RunConfig instead: {naming:?}"
    );
}

#[test]
fn run_config_fields_are_private() {
    let text = std::fs::read_to_string(repo_root().join("src/config/mod.rs")).unwrap();
    let start = text
        .find("pub(crate) struct RunConfig {")
        .expect("the struct");
    let body = &text[start..start + text[start..].find("\n}").unwrap()];
    let public: Vec<&str> = body
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| l.starts_with("pub"))
        .collect();
    assert!(public.is_empty(), "public fields: {public:?}");
}

#[test]
fn the_scan_sees_the_command_line_named() {
    assert!(names_the_flags("fn f(args: &crate::cli::RunArgs) {}"));
    assert!(names_the_flags("use crate::config::{Call, Settings};"));
    assert!(!names_the_flags("use crate::config::{Answers, RunConfig};"));
}
