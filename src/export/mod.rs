//! `cn-run export`: turn scheduled jobs into files another scheduler runs — a GitHub Actions
//! workflow ([`github_workflow`]) or Kubernetes CronJobs with a ConfigMap ([`k8s_cronjob`]).
//!
//! Both are built as JSON values and written with the YAML serializer, so quoting is never
//! hand-made. Both need every job to have a `schedule:`; its cron line is written in the
//! form GitHub and Kubernetes read to the same instants as `cn-run schedule`
//! ([`crate::job::CronTab::portable`]: as written where the readings agree, else its values
//! spelled out), and refused where no line can say the same there.

mod github;
mod github_matrix;
mod k8s;
mod k8s_job;
mod k8s_pod;
mod timing;

use std::path::{Path, PathBuf};

pub use github::{GithubOptions, github_workflow};
pub use github_matrix::github_matrix;
pub use k8s::{K8sOptions, k8s_cronjob};
pub use k8s_job::k8s_job;

use crate::config::{Call, RunConfig, Settings};
use crate::job::file::{JobFile, OutputSchemaSpec, RuleEntry};
use crate::job::{self, Job, LoadOptions, Schedule};

/// What can stop an export.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Job(#[from] crate::job::JobError),
    /// The job loads but its configuration does not resolve (as a run of it would fail).
    #[error("{path}: {message}")]
    Config { path: String, message: String },
    #[error("{path}: job `{name}` has no `schedule:`; add one (e.g. schedule: \"0 3 * * 1\")")]
    NoSchedule { path: String, name: String },
    #[error("{path}: {source}")]
    Unsupported { path: String, source: Unportable },
    #[error("{0}")]
    Conflict(String),
}

/// Why a schedule cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum Unportable {
    #[error("`{cron}` cannot be exported: {why}")]
    Days { cron: String, why: String },
    #[error(
        "cron line `{cron}` is used in two time zones ({first} and {second}); a workflow run \
         only knows which line fired. Give the jobs different lines."
    )]
    TwoZones {
        cron: String,
        first: String,
        second: String,
    },
}

/// A job to export: its configuration resolved as a run of it resolves it
/// ([`RunConfig::resolve`]), its file as written, and the files it names.
#[derive(Debug, Clone)]
pub struct ExportJob {
    pub(crate) config: RunConfig,
    /// The path as given (relative to where the workflow or image runs), `/`-separated.
    pub path: String,
    /// The job file's text.
    pub text: String,
    /// Files the job names relative to itself (script, rule files, output schema):
    /// the relative path and the text.
    pub companions: Vec<(String, String)>,
    /// Such files outside the job's folder (they cannot be shipped with it).
    pub outside: Vec<String>,
}

impl ExportJob {
    /// Load and validate `path` (with `params`), reading the files it names.
    pub fn load(path: &Path, params: &[(String, String)]) -> Result<ExportJob, ExportError> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|source| ExportError::Read {
                path: p.to_path_buf(),
                source,
            })
        };
        let text = read(path)?;
        let opts = LoadOptions {
            params: params.to_vec(),
            ..Default::default()
        };
        let job = job::load_file(path, &opts)?;
        let call = Call {
            elsewhere: true,
            ..Call::default()
        };
        let config = RunConfig::resolve(job, Settings::default(), call).map_err(|e| {
            ExportError::Config {
                path: path.display().to_string(),
                message: e.to_string(),
            }
        })?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut companions = Vec::new();
        let mut outside = Vec::new();
        if let Ok(raw) = serde_yaml::from_str::<JobFile>(&text) {
            for rel in named_files(&raw) {
                let inside = Path::new(&rel).is_relative()
                    && !Path::new(&rel)
                        .components()
                        .any(|c| matches!(c, std::path::Component::ParentDir));
                if inside {
                    companions.push((rel.clone(), read(&dir.join(&rel))?));
                } else {
                    outside.push(rel);
                }
            }
        }
        let path = path.to_string_lossy().replace('\\', "/");
        let path = path.strip_prefix("./").unwrap_or(&path).to_owned();
        Ok(ExportJob {
            config,
            path,
            text,
            companions,
            outside,
        })
    }

    /// The job's schedule, or the error that says it has none.
    pub(crate) fn schedule(&self) -> Result<&Schedule, ExportError> {
        self.job()
            .schedule
            .as_ref()
            .ok_or_else(|| ExportError::NoSchedule {
                path: self.path.clone(),
                name: self.config.job().name.clone(),
            })
    }

    /// The cron line as GitHub and Kubernetes read it to the same instants.
    pub(crate) fn portable_cron(&self) -> Result<String, ExportError> {
        let schedule = self.schedule()?;
        let unsupported = |source| ExportError::Unsupported {
            path: self.path.clone(),
            source,
        };
        let tab = schedule.compile().map_err(|e| {
            unsupported(Unportable::Days {
                cron: schedule.cron.clone(),
                why: e.to_string(),
            })
        })?;
        let line = tab.portable().map_err(|why| {
            unsupported(Unportable::Days {
                cron: schedule.cron.clone(),
                why: why.to_string(),
            })
        })?;
        if line != schedule.cron {
            tracing::info!(
                "{}: `{}` is exported as `{line}` (the same instants, read the same way by \
                 GitHub and Kubernetes)",
                self.path,
                schedule.cron
            );
        }
        Ok(line)
    }

    /// The job as the run resolves it.
    pub fn job(&self) -> &Job {
        self.config.job()
    }

    /// The environment variable the run reads the provider key from, if it needs one.
    pub(crate) fn key_env(&self) -> Option<String> {
        self.config.key_env().map(str::to_owned)
    }

    /// The run's time limit: the job's, else the run's default (what the run stops at).
    pub(crate) fn timeout_secs(&self) -> u64 {
        self.config.timeout().0.as_secs()
    }
}

/// Paths the job file names relative to itself.
fn named_files(raw: &JobFile) -> Vec<String> {
    let mut out: Vec<String> = raw.model.script.iter().cloned().collect();
    for r in &raw.rules {
        if let RuleEntry::File(f) = r {
            out.push(f.file.clone());
        }
    }
    if let Some(OutputSchemaSpec::File(f)) = &raw.output_schema {
        out.push(f.file.clone());
    }
    out
}

/// The widest line of the comment at the top of a generated file.
const COMMENT_WIDTH: usize = 96;

/// Write `docs` as one YAML stream, after a comment saying where it came from.
pub(crate) fn yaml_stream(comment: &str, docs: &[serde_json::Value]) -> String {
    let mut out = String::new();
    for line in comment.lines() {
        let mut current = String::new();
        for word in line.split(' ') {
            if !current.is_empty() && current.len() + 1 + word.len() > COMMENT_WIDTH {
                out.push_str(&format!("# {current}\n"));
                current.clear();
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(&format!("# {current}\n"));
    }
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&serde_yaml::to_string(doc).unwrap_or_default());
    }
    out
}

/// Lowercase letters, digits and `-` only, no leading or trailing `-`, at most `max` long.
pub(crate) fn dns_label(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.trim_matches('-').chars().take(max).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "job".to_owned()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        assert_eq!(dns_label("Fix Lint!", 52), "fix-lint");
        assert_eq!(dns_label("--", 52), "job");
        assert_eq!(dns_label("abc-def", 4), "abc");
    }
}
