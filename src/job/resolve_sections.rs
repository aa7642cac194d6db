//! The job file's sections resolved one by one (git, checks, output schema, parameters,
//! rules, limits, workspace), for [`super::resolve`]: each problem goes into the same
//! located list.

use std::collections::BTreeMap;
use std::time::Duration;

use super::file::{JobFile, OutputSchemaSpec, RuleEntry, WorkspaceSection};
use super::load::LoadOptions;
use super::resolve::Ctx;
use super::template::Context;
use super::units::parse_size;
use super::{Check, GitSettings, Limits, Rule, WorkspaceSpec};

/// The git section with its defaults; a size that does not parse is a located problem.
pub(super) fn git_settings(cx: &mut Ctx<'_>, raw: &super::file::GitSection) -> GitSettings {
    let defaults = GitSettings::default();
    let max_file_bytes = match &raw.max_file_size {
        None => defaults.max_file_bytes,
        Some(super::file::SizeValue::Bytes(n)) => *n,
        Some(super::file::SizeValue::Text(t)) => parse_size(t).unwrap_or_else(|message| {
            cx.push("git.max_file_size", message.to_string());
            defaults.max_file_bytes
        }),
    };
    GitSettings {
        checkpoints: raw.checkpoints.unwrap_or(true),
        rollback_on_failure: raw.rollback_on_failure,
        max_file_bytes,
        max_dir_files: raw.max_dir_files.map_or(defaults.max_dir_files, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
        binary_patch: raw.binary_patch,
        keep: raw.keep,
    }
}

pub(super) fn checks(
    cx: &mut Ctx<'_>,
    raw: &JobFile,
    params: &BTreeMap<String, String>,
) -> Vec<Check> {
    let mut out = Vec::new();
    for (i, c) in raw.checks.iter().enumerate() {
        let field = format!("checks[{i}]");
        if c.run.trim().is_empty() {
            cx.push(&format!("{field}.run"), "the command is empty".to_owned());
        }
        let run = cx.render(&format!("{field}.run"), &c.run, params, Context::Shell);
        let timeout = cx
            .duration(&format!("{field}.timeout"), c.timeout.as_ref())
            .unwrap_or(Duration::from_secs(600));
        out.push(Check {
            name: c.name.clone(),
            run,
            timeout,
        });
    }
    out
}

pub(super) fn output_schema(cx: &mut Ctx<'_>, raw: &JobFile) -> Option<serde_json::Value> {
    let schema = match raw.output_schema.as_ref()? {
        OutputSchemaSpec::Inline(map) => serde_json::Value::Object(map.clone()),
        OutputSchemaSpec::File(f) => {
            let path = cx.base.join(&f.file);
            let text = match cx.read_file(&f.file) {
                Ok(t) => t,
                Err(e) => {
                    cx.push("output_schema.file", e);
                    return None;
                }
            };
            match serde_yaml::from_str::<serde_json::Value>(&text) {
                Ok(v) => v,
                Err(e) => {
                    cx.push(
                        "output_schema.file",
                        format!("{} is not JSON or YAML: {e}", path.display()),
                    );
                    return None;
                }
            }
        }
    };
    if let Err(e) = jsonschema::validator_for(&schema) {
        cx.push(
            "output_schema",
            format!("not a valid JSON schema: {}", e.masked()),
        );
        return None;
    }
    Some(schema)
}

pub(super) fn params(
    cx: &mut Ctx<'_>,
    raw: &JobFile,
    opts: &LoadOptions,
) -> BTreeMap<String, String> {
    let mut values = BTreeMap::new();
    for (name, spec) in &raw.params {
        if let Some(d) = &spec.default {
            values.insert(name.clone(), d.as_text());
        }
    }
    for (name, value) in &opts.params {
        if !raw.params.contains_key(name) {
            let declared: Vec<&str> = raw.params.keys().map(String::as_str).collect();
            let hint = super::suggest::did_you_mean(name, declared.iter().copied());
            cx.push(
                "params",
                format!(
                    "--param {name}=… sets a parameter the job does not declare (declared: {}){hint}",
                    if declared.is_empty() {
                        "none".to_owned()
                    } else {
                        declared.join(", ")
                    }
                ),
            );
        }
        values.insert(name.clone(), value.clone());
    }
    for name in raw.params.keys() {
        if !values.contains_key(name) {
            let field = format!("params.{name}");
            let pos = cx.loc.key(&field);
            cx.push_at(pos, &field, format!("required parameter has no value: pass --param {name}=VALUE or give it a default"));
        }
    }
    values
}

pub(super) fn rules(
    cx: &mut Ctx<'_>,
    raw: &JobFile,
    params: &BTreeMap<String, String>,
) -> Vec<Rule> {
    let mut out = Vec::new();
    for (i, entry) in raw.rules.iter().enumerate() {
        match entry {
            RuleEntry::Text(t) => {
                let text = cx.render(&format!("rules[{i}]"), t, params, Context::Text);
                out.push(Rule {
                    name: format!("rules[{i}]"),
                    origin: crate::events::RuleOrigin::Inline,
                    text,
                    applies: crate::rules::Applies::Always,
                });
            }
            RuleEntry::File(f) => {
                let parsed = cx.read_file(&f.file).and_then(|text| {
                    crate::rules::parse_rule(&f.file, &text).map_err(|e| e.to_string())
                });
                match parsed {
                    Ok(rule) => out.push(rule),
                    Err(e) => cx.push(&format!("rules[{i}].file"), e),
                }
            }
        }
    }
    out
}

pub(super) fn limits(cx: &mut Ctx<'_>, raw: &JobFile) -> Limits {
    let l = &raw.limits;
    if l.max_turns == Some(0) {
        cx.push("limits.max_turns", "must be at least 1".to_owned());
    }
    if l.max_calls_per_response == Some(0) {
        cx.push(
            "limits.max_calls_per_response",
            "must be at least 1".to_owned(),
        );
    }
    if l.max_cost_usd.is_some_and(|c| c.is_nan() || c < 0.0) {
        cx.push(
            "limits.max_cost_usd",
            "must be a positive number".to_owned(),
        );
    }
    Limits {
        max_turns: l.max_turns,
        timeout: cx.duration("limits.timeout", l.timeout.as_ref()),
        max_cost_usd: l.max_cost_usd,
        max_tokens: l.max_tokens,
        max_calls_per_response: l.max_calls_per_response,
    }
}

pub(super) fn workspace(cx: &mut Ctx<'_>, raw: &JobFile) -> WorkspaceSpec {
    let (path, copy, field) = match &raw.workspace {
        None => return WorkspaceSpec::default(),
        Some(WorkspaceSection::Path(p)) => (p.clone(), false, "workspace"),
        Some(WorkspaceSection::Spec(s)) => (s.path.clone(), s.copy, "workspace.path"),
    };
    let full = cx.base.join(&path);
    if !full.is_dir() {
        cx.push(
            field,
            format!("workspace directory not found: {}", full.display()),
        );
    }
    WorkspaceSpec {
        path: Some(full),
        copy,
    }
}
