//! Loading a job file: YAML syntax, then the generated JSON schema (which reports *every*
//! problem at once, each located by `Locator`), then the raw serde types, then resolution.

use std::path::Path;
use std::sync::LazyLock;

use serde_json::Value;

use super::error::{JobError, Problem, sorted};
use super::file::JobFile;
use super::locate::{Locator, Pos};
use super::schema_msg::{Source, schema_problems};
use super::{Job, resolve};

/// Values given on the command line.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--param NAME=VALUE`, in order.
    pub params: Vec<(String, String)>,
    /// The files the job names (rule files, the output schema) as the first run read them,
    /// by the path the job gives: a resume reads these, never the files as they are now
    /// (they may lie in the workspace the model has written since). `None`: read the disk.
    pub kept_files: Option<std::collections::BTreeMap<String, String>>,
}

/// The JSON schema of job files, generated from the raw types.
pub fn job_schema() -> Value {
    crate::json_schema::schema_for::<JobFile>()
}

static SCHEMA: LazyLock<Value> = LazyLock::new(job_schema);

static VALIDATOR: LazyLock<Option<jsonschema::Validator>> =
    LazyLock::new(|| jsonschema::validator_for(&SCHEMA).ok());

/// Read and validate a job file.
pub fn load_file(path: &Path, opts: &LoadOptions) -> Result<Job, JobError> {
    let text = std::fs::read_to_string(path).map_err(|e| JobError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    load_str(&text, &path.display().to_string(), Some(path), opts)
}

/// Validate job text; `label` names it in problems, `path` anchors relative paths.
pub fn load_str(
    text: &str,
    label: &str,
    path: Option<&Path>,
    opts: &LoadOptions,
) -> Result<Job, JobError> {
    let shape = super::yaml_shape::check(text, label);
    if !shape.is_empty() {
        return Err(JobError::Invalid(sorted(shape)));
    }
    let loc = Locator::new(text);
    match parse(text, label, &loc) {
        Ok(raw) => resolve::resolve(raw, text, label, path, &loc, opts),
        Err(Unparsed { problems, rest }) => {
            let mut problems = problems;
            // What the schema refused is out of the rest: resolving it finds the others.
            if let Some((raw, pruned)) = rest.map(|b| *b)
                && let Err(e) = resolve::resolve(raw, text, label, path, &loc, opts)
            {
                let known: Vec<(usize, usize, String)> = problems
                    .iter()
                    .map(|p| (p.line, p.column, p.message.clone()))
                    .collect();
                problems.extend(
                    e.problems()
                        .iter()
                        .filter(|p| {
                            !super::prune::inside(&p.field, &pruned)
                                && !known.contains(&(p.line, p.column, p.message.clone()))
                        })
                        .cloned(),
                );
            }
            Err(JobError::Invalid(sorted(problems)))
        }
    }
}

/// A job file that did not parse: its problems, and (when what the schema refused could
/// be taken out) the rest of it with the fields taken out.
struct Unparsed {
    problems: Vec<Problem>,
    rest: Option<Box<(JobFile, Vec<String>)>>,
}

impl From<Vec<Problem>> for Unparsed {
    fn from(problems: Vec<Problem>) -> Self {
        Unparsed {
            problems,
            rest: None,
        }
    }
}

/// A job from raw values built in code (the ad-hoc `-p` job): resolved like a file, but
/// without the YAML and schema pass (compiling the schema validator costs milliseconds).
pub fn load_raw(raw: JobFile, label: &str, opts: &LoadOptions) -> Result<Job, JobError> {
    resolve::resolve(raw, "", label, None, &Locator::default(), opts)
}

pub(super) fn problem(label: &str, pos: Option<Pos>, field: &str, message: String) -> Problem {
    let pos = pos.unwrap_or(Pos { line: 1, column: 1 });
    Problem {
        file: label.to_owned(),
        line: pos.line,
        column: pos.column,
        field: field.to_owned(),
        message,
    }
}

fn parse(text: &str, label: &str, loc: &Locator) -> Result<JobFile, Unparsed> {
    let value: Value = serde_yaml::from_str(text).map_err(|e| {
        let pos = e.location().map(|l| Pos {
            line: l.line(),
            column: l.column(),
        });
        vec![problem(
            label,
            pos,
            "",
            format!("invalid YAML: {}", yaml_message(&e)),
        )]
    })?;
    if !value.is_object() {
        return Err(vec![problem(
            label,
            None,
            "",
            "a job file must be a YAML mapping (prompt, model, …)".to_owned(),
        )]
        .into());
    }
    if let Some(validator) = VALIDATOR.as_ref() {
        let src = Source {
            label,
            root: &value,
            schema: &SCHEMA,
            loc,
        };
        let errors: Vec<_> = validator.iter_errors(&value).collect();
        if !errors.is_empty() {
            let problems = errors
                .iter()
                .flat_map(|err| schema_problems(err, &src))
                .collect();
            let rest = super::prune::refused(&errors).and_then(|pointers| {
                let (pruned, fields) = super::prune::prune(&value, pointers);
                let raw = serde_json::from_value(pruned).ok()?;
                Some(Box::new((raw, fields)))
            });
            return Err(Unparsed { problems, rest });
        }
    }
    // What the schema cannot say (a number too large for its field) fails here; the path
    // serde reports puts the problem on its line.
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let field = if field == "." { String::new() } else { field };
        let message = range_message(&e.inner().to_string());
        vec![problem(label, loc.value(&field), &field, message)].into()
    })
}

/// "invalid value: integer `99999999999`, expected u32" in a job author's words.
fn range_message(serde: &str) -> String {
    let max = [
        ("u8", "255"),
        ("u16", "65535"),
        ("u32", "4294967295"),
        ("u64", "18446744073709551615"),
    ]
    .into_iter()
    .find(|(ty, _)| serde.ends_with(&format!("expected {ty}")));
    match max {
        Some((_, max)) => format!("must be a whole number from 0 to {max}"),
        None => serde.to_owned(),
    }
}

/// serde_yaml's message without its own "at line … column …" suffix (we print positions).
fn yaml_message(e: &serde_yaml::Error) -> String {
    let msg = e.to_string();
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg,
    }
}
