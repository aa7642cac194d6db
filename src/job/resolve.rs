//! From the raw job file to a validated [`Job`]: parameters and templates, durations, rule
//! files, the script file, the workspace. Every problem is collected with its position,
//! so one `cn-run validate` run shows them all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{JobError, Problem, ValueError, sorted};
use super::file::{DurationSpec, JobFile, OutputSchemaSpec, RuleEntry, WorkspaceSection};
use super::load::{LoadOptions, problem};
use super::locate::{Locator, Pos};
use super::{
    Check, GitSettings, Job, Limits, ModelSpec, PermissionSpec, Rule, ToolSettings, WorkspaceSpec,
};
use crate::provider::Family;

/// Parse `15m`, `90s`, `1h30m`, `2 hours` (or a plain number of seconds).
/// The git section with its defaults; a size that does not parse is a located problem.
fn git_settings(cx: &mut Ctx<'_>, raw: &super::file::GitSection) -> GitSettings {
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

/// `10MB`, `512 KiB`, `1G`, `2048` → bytes (units are powers of 1024).
pub(super) fn parse_size(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| ValueError::NotASize(text.to_owned()))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => {
            return Err(ValueError::SizeUnit {
                text: text.to_owned(),
                unit: other.to_owned(),
            });
        }
    };
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| ValueError::TooLarge(text.to_owned()))
}

pub fn parse_duration(text: &str) -> Result<Duration, ValueError> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let d: jiff::SignedDuration = t
        .parse()
        .map_err(|_| ValueError::NotADuration(t.to_owned()))?;
    if d.is_negative() {
        return Err(ValueError::Negative(t.to_owned()));
    }
    Ok(d.unsigned_abs())
}

pub(super) struct Ctx<'a> {
    text: &'a str,
    label: &'a str,
    pub(super) loc: &'a Locator,
    base: PathBuf,
    /// Parameters the job declares: a reference to one is never "undeclared" (one without
    /// a value is reported once, as a required parameter).
    declared: Vec<String>,
    problems: Vec<Problem>,
    /// See [`LoadOptions::kept_files`].
    kept: Option<&'a BTreeMap<String, String>>,
    /// The files the job named, as read now (kept by a run for its resumes).
    read: BTreeMap<String, String>,
}

impl Ctx<'_> {
    pub(super) fn push(&mut self, field: &str, message: String) {
        let pos = self.loc.value(field);
        self.problems.push(problem(self.label, pos, field, message));
    }

    /// A file the job names, relative to the job file: the text the first run read when
    /// resuming, else the file on disk (recorded in [`Job::files_read`]).
    fn read_file(&mut self, rel: &str) -> Result<String, String> {
        if let Some(kept) = self.kept {
            return kept
                .get(rel)
                .cloned()
                .ok_or_else(|| format!("{rel} was not read by the run being resumed"));
        }
        let path = self.base.join(rel);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        self.read.insert(rel.to_owned(), text.clone());
        Ok(text)
    }

    pub(super) fn push_at(&mut self, pos: Option<Pos>, field: &str, message: String) {
        self.problems.push(problem(self.label, pos, field, message));
    }

    pub(super) fn duration(
        &mut self,
        field: &str,
        spec: Option<&DurationSpec>,
    ) -> Option<Duration> {
        match spec? {
            DurationSpec::Seconds(s) => Some(Duration::from_secs(*s)),
            DurationSpec::Text(t) => match parse_duration(t) {
                Ok(d) => Some(d),
                Err(msg) => {
                    self.push(field, msg.to_string());
                    None
                }
            },
        }
    }

    /// Render shell text: each parameter one shell word (unless `| raw`).
    fn render_shell(
        &mut self,
        field: &str,
        template: &str,
        values: &BTreeMap<String, String>,
    ) -> String {
        self.render_in(field, template, values, super::template::Context::Shell)
    }

    /// Render a template; unknown parameters are reported where the `{{` is in the file.
    fn render(&mut self, field: &str, template: &str, values: &BTreeMap<String, String>) -> String {
        self.render_in(field, template, values, super::template::Context::Text)
    }

    fn render_in(
        &mut self,
        field: &str,
        template: &str,
        values: &BTreeMap<String, String>,
        context: super::template::Context,
    ) -> String {
        match super::template::render_as(template, values, context) {
            Ok(s) => s,
            Err(unknown) => {
                for u in unknown {
                    if self.declared.contains(&u.name) {
                        continue;
                    }
                    let needle = &template[u.offset..];
                    let needle = &needle[..needle.find("}}").map_or(needle.len(), |i| i + 2)];
                    let pos = self.find_in_text(field, needle);
                    let hint = super::suggest::did_you_mean(
                        &u.name,
                        self.declared.iter().map(String::as_str),
                    );
                    self.push_at(
                        pos,
                        field,
                        format!(
                            "template refers to `params.{}`, which is not a declared parameter{hint}",
                            u.name
                        ),
                    );
                }
                template.to_owned()
            }
        }
    }

    /// Where `needle` occurs in the file, searching from the field's position.
    fn find_in_text(&self, field: &str, needle: &str) -> Option<Pos> {
        let start = self.loc.value(field)?;
        let line_start: usize = self
            .text
            .split_inclusive('\n')
            .take(start.line - 1)
            .map(str::len)
            .sum();
        let idx = self.text[line_start..].find(needle)? + line_start;
        let before = &self.text[..idx];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        Some(Pos { line, column }).or(Some(start))
    }
}

pub(super) fn resolve(
    raw: JobFile,
    text: &str,
    label: &str,
    path: Option<&Path>,
    loc: &Locator,
    opts: &LoadOptions,
) -> Result<Job, JobError> {
    let base = path
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut cx = Ctx {
        text,
        label,
        loc,
        base,
        declared: raw.params.keys().cloned().collect(),
        problems: Vec::new(),
        kept: opts.kept_files.as_ref(),
        read: BTreeMap::new(),
    };
    if raw.version != 1 {
        cx.push(
            "version",
            format!("unsupported version {}; only 1 exists", raw.version),
        );
    }
    let params = params(&mut cx, &raw, opts);
    let prompt = if raw.prompt.trim() == "-" {
        None
    } else {
        if raw.prompt.trim().is_empty() {
            cx.push("prompt", "the prompt is empty".to_owned());
        }
        Some(cx.render("prompt", &raw.prompt, &params))
    };
    let model = model(&mut cx, &raw);
    let rules = rules(&mut cx, &raw, &params);
    let limits = limits(&mut cx, &raw);
    let tools = ToolSettings {
        bash_timeout: cx.duration("tools.bash.timeout", raw.tools.bash.timeout.as_ref()),
        bash_max_chars: raw.tools.bash.max_output_chars,
        bash_max_lines: raw.tools.bash.max_output_lines,
        bash_sandbox: raw.tools.bash.sandbox.unwrap_or_default(),
        bash_network: bash_network(raw.tools.bash.network.as_ref()),
        bash_network_hosts: bash_network_hosts(&mut cx, raw.tools.bash.network.as_ref()),
        bash_require_sandbox: raw.tools.bash.require_sandbox.unwrap_or(false),
        bash_writable: raw.tools.bash.writable.clone(),
        bash_readable: raw.tools.bash.readable.clone(),
        bash_env: raw.tools.bash.env.clone(),
        bash_git: raw.tools.bash.git.unwrap_or_default(),
        bash_limits: super::bash_limits::resolve(&mut cx, raw.tools.bash.limits.as_ref()),
    };
    let workspace = workspace(&mut cx, &raw);
    for (field, message) in super::rule_tools::problems(&raw) {
        cx.push(&field, message);
    }
    let checks = checks(&mut cx, &raw, &params);
    for (field, problem) in crate::hooks::config::problems(&raw.hooks) {
        cx.push(&field, problem);
    }
    let output_schema = output_schema(&mut cx, &raw);
    let upload = super::resolve_net::upload(&mut cx, &raw);
    if let Some(Err(why)) = raw.store.as_deref().map(crate::store::check_url) {
        cx.push("store", why);
    }
    let mcp_servers = super::resolve_net::mcp_servers(&mut cx, &raw);
    let skills = raw.skills.iter().map(|d| cx.base.join(d)).collect();
    let schedule = super::cron::resolve(raw.schedule.as_ref(), |f, m| cx.push(f, m));
    if raw.retry.max_attempts == Some(0) {
        cx.push("retry.max_attempts", "must be at least 1".to_owned());
    }
    let git = git_settings(&mut cx, &raw.git);
    if !cx.problems.is_empty() {
        return Err(JobError::Invalid(sorted(cx.problems)));
    }
    let name = raw.name.clone().unwrap_or_else(|| {
        path.and_then(Path::file_stem)
            .map_or_else(|| "job".to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let p = raw.permissions;
    Ok(Job {
        name,
        description: raw.description,
        source: path.map(Path::to_path_buf),
        model,
        prompt,
        params,
        rules,
        permissions: PermissionSpec {
            mode: p.mode.unwrap_or_default(),
            allow: p.allow,
            ask: p.ask,
            exclude: p.exclude,
            on_ask: p.on_ask.unwrap_or_default(),
            file: p.file,
        },
        limits,
        tools,
        workspace,
        checks,
        max_attempts: raw.retry.max_attempts.unwrap_or(1).max(1),
        output_schema,
        artifacts: raw.artifacts,
        git,
        redact: raw.redact,
        capture_content: raw.telemetry.capture_content,
        upload,
        store: raw.store.clone(),
        mcp_servers,
        subagents: raw.subagents.clone(),
        untrusted_paths: raw.untrusted_paths.clone(),
        base_ref: raw.base_ref.clone(),
        skills,
        schedule,
        html: raw.outputs.html.unwrap_or(true),
        hooks: raw.hooks.clone(),
        repo_hooks: raw.repo_hooks,
        files_read: cx.read,
    })
}

fn checks(cx: &mut Ctx<'_>, raw: &JobFile, params: &BTreeMap<String, String>) -> Vec<Check> {
    let mut out = Vec::new();
    for (i, c) in raw.checks.iter().enumerate() {
        let field = format!("checks[{i}]");
        if c.run.trim().is_empty() {
            cx.push(&format!("{field}.run"), "the command is empty".to_owned());
        }
        let run = cx.render_shell(&format!("{field}.run"), &c.run, params);
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

fn output_schema(cx: &mut Ctx<'_>, raw: &JobFile) -> Option<serde_json::Value> {
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

fn params(cx: &mut Ctx<'_>, raw: &JobFile, opts: &LoadOptions) -> BTreeMap<String, String> {
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

fn model(cx: &mut Ctx<'_>, raw: &JobFile) -> ModelSpec {
    let m = &raw.model;
    let script = m.script.as_ref().map(|s| cx.base.join(s));
    let family = m.provider.family();
    match (family.accepts.script, &script) {
        (true, None) => {
            cx.push(
                "model.provider",
                format!("provider `{}` needs `model.script: FILE`", family.name),
            );
        }
        (true, Some(p)) if !p.is_file() => {
            cx.push(
                "model.script",
                format!("script file not found: {}", p.display()),
            );
        }
        (false, Some(_)) => {
            let only = Family::accepting(|a| a.script);
            cx.push("model.script", format!("`script` is only for {only}"));
        }
        _ => {}
    }
    if let Some(env) = &m.api_key_env
        && (env.is_empty() || env.contains(['=', ' ', '$']))
    {
        cx.push(
            "model.api_key_env",
            "must be the NAME of an environment variable".to_owned(),
        );
    }
    if let Some(base) = &m.api_base
        && !(base.starts_with("http://") || base.starts_with("https://"))
    {
        cx.push(
            "model.api_base",
            "must be an http:// or https:// URL".to_owned(),
        );
    }
    check_model_extras(cx, m);
    let retry = m.retry.as_ref();
    ModelSpec {
        provider: m.provider,
        name: m.name.clone(),
        api_base: m.api_base.clone(),
        api_key_env: m.api_key_env.clone(),
        context_length: m.context_length,
        max_tokens: m.max_tokens,
        temperature: m.temperature,
        script,
        headers: m
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        max_retries: retry.and_then(|r| r.max_retries),
        initial_retry_delay: cx.duration(
            "model.retry.initial_delay",
            retry.and_then(|r| r.initial_delay.as_ref()),
        ),
        idle_timeout: cx.duration("model.idle_timeout", m.idle_timeout.as_ref()),
        request_timeout: cx.duration("model.request_timeout", m.request_timeout.as_ref()),
        tool_call_format: m.tool_call_format.unwrap_or_default(),
        pricing: m.pricing,
        stream_usage: m.stream_usage.unwrap_or(true),
        thinking_budget: m
            .thinking
            .filter(|t| t.kind != Some(crate::job::file::ThinkingKind::Disabled))
            .map(|t| t.budget_tokens),
        deployment: m.deployment.clone(),
        api_version: m.api_version.clone(),
    }
}

/// The rules for thinking and Azure settings (docs.anthropic.com, "Extended thinking":
/// `budget_tokens` ≥ 1024 and below `max_tokens`).
fn check_model_extras(cx: &mut Ctx<'_>, m: &crate::job::file::ModelSection) {
    if let Some(t) = m
        .thinking
        .as_ref()
        .filter(|t| t.kind != Some(crate::job::file::ThinkingKind::Disabled))
    {
        if !m.provider.family().accepts.thinking {
            let only = Family::accepting(|a| a.thinking);
            cx.push("model.thinking", format!("is only for {only}"));
        }
        if t.budget_tokens < 1024 {
            cx.push(
                "model.thinking.budget_tokens",
                "must be at least 1024".to_owned(),
            );
        }
        if let Some(max) = m.max_tokens
            && max <= t.budget_tokens
        {
            cx.push(
                "model.max_tokens",
                format!("must be above thinking.budget_tokens ({})", t.budget_tokens),
            );
        }
    }
    let family = m.provider.family();
    if let (Some(example), None) = (family.needs_api_base, &m.api_base) {
        cx.push(
            "model.api_base",
            format!(
                "`provider: {}` needs the resource URL, e.g. {example}",
                family.name
            ),
        );
    }
    for (field, set) in [
        ("model.deployment", m.deployment.is_some()),
        ("model.api_version", m.api_version.is_some()),
    ] {
        if set && !family.accepts.deployment {
            let only = Family::accepting(|a| a.deployment);
            cx.push(field, format!("is only for {only}"));
        }
    }
}

fn rules(cx: &mut Ctx<'_>, raw: &JobFile, params: &BTreeMap<String, String>) -> Vec<Rule> {
    let mut out = Vec::new();
    for (i, entry) in raw.rules.iter().enumerate() {
        match entry {
            RuleEntry::Text(t) => {
                let text = cx.render(&format!("rules[{i}]"), t, params);
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

fn limits(cx: &mut Ctx<'_>, raw: &JobFile) -> Limits {
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

fn workspace(cx: &mut Ctx<'_>, raw: &JobFile) -> WorkspaceSpec {
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

/// `tools.bash.network`: `true`/`false`; a host list is `false` plus the hosts.
fn bash_network(raw: Option<&super::file::BashNetwork>) -> Option<bool> {
    match raw? {
        super::file::BashNetwork::Allowed(allowed) => Some(*allowed),
        super::file::BashNetwork::Hosts(_) => Some(false),
    }
}

/// The hosts of `tools.bash.network: [hosts]`, each one checked.
fn bash_network_hosts(
    cx: &mut Ctx<'_>,
    raw: Option<&super::file::BashNetwork>,
) -> Vec<crate::sandbox::HostRule> {
    let Some(super::file::BashNetwork::Hosts(hosts)) = raw else {
        return Vec::new();
    };
    if hosts.is_empty() {
        cx.push(
            "tools.bash.network",
            "an empty list of hosts: write `network: false` for no network".to_owned(),
        );
    }
    let mut rules = Vec::new();
    for (i, host) in hosts.iter().enumerate() {
        match crate::sandbox::HostRule::parse(host) {
            Ok(rule) => rules.push(rule),
            Err(why) => cx.push(&format!("tools.bash.network[{i}]"), why.to_string()),
        }
    }
    rules
}
