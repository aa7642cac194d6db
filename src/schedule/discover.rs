//! Which jobs `cn-run schedule PATH…` schedules: every `*.yaml`/`*.yml` job file directly in a
//! folder (sorted by name; sub-folders such as `scripts/` are not searched), or a job file
//! named as it is. Files without a top-level `schedule:` are listed apart, never loaded and
//! never started; a file with one must be a valid job.

use std::path::{Path, PathBuf};

use super::ScheduleError;
use super::engine::Entry;
use crate::config::{Call, RunConfig, Settings};
use crate::job::{self, LoadOptions};

/// The jobs found.
#[derive(Debug, Default)]
pub struct Discovered {
    pub entries: Vec<Entry>,
    /// Job files without a schedule.
    pub unscheduled: Vec<PathBuf>,
}

/// The job's configuration as a run started from here (`cn-run FILE`, no flags) resolves
/// it; its workspace is checked when that run starts.
fn resolve(file: &Path) -> Result<RunConfig, ScheduleError> {
    let loaded = job::load_file(file, &LoadOptions::default());
    let job = loaded.map_err(|e| ScheduleError::Jobs(e.to_string()))?;
    let call = Call {
        elsewhere: true,
        ..Call::default()
    };
    RunConfig::resolve(job, Settings::default(), call)
        .map_err(|e| ScheduleError::Jobs(format!("{}: {e}", file.display())))
}

/// Load every job under `paths`; any job file that does not load is an error (all of them
/// are reported together).
pub fn discover(paths: &[PathBuf]) -> Result<Discovered, ScheduleError> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            files.extend(yaml_files(p)?);
        } else {
            files.push(p.clone());
        }
    }
    let mut found = Discovered::default();
    let mut problems = Vec::new();
    for file in files {
        if !has_schedule(&file) {
            found.unscheduled.push(file);
            continue;
        }
        let config = match resolve(&file) {
            Ok(c) => c,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        let job = config.job();
        let Some(schedule) = job.schedule.clone() else {
            found.unscheduled.push(file);
            continue;
        };
        let tab = match schedule.compile() {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        let abs = std::path::absolute(&file).unwrap_or_else(|_| file.clone());
        found.entries.push(Entry {
            key: abs.display().to_string(),
            name: job.name.clone(),
            file: abs,
            schedule,
            tab,
            // The reaper's `--default-timeout` stands for a job that sets none.
            timeout: match config.timeout() {
                (_, "default") => None,
                (t, _) => Some(t),
            },
        });
    }
    if !problems.is_empty() {
        return Err(ScheduleError::Jobs(problems.join("\n")));
    }
    Ok(found)
}

/// Whether a YAML file has a top-level `schedule:` (other files, such as scripts of the
/// script provider, are left alone, valid job files or not). Unreadable files count as
/// scheduled, so loading them reports why.
fn has_schedule(file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return true;
    };
    match serde_yaml::from_str::<serde_json::Value>(&text) {
        Ok(v) => v.get("schedule").is_some(),
        Err(_) => true,
    }
}

fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, ScheduleError> {
    let read = std::fs::read_dir(dir).map_err(|source| ScheduleError::Io {
        what: "read",
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    Ok(files)
}
