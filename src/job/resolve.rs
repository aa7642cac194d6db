//! From the raw job file to a validated [`Job`]: the context problems are collected in
//! (each with its position, so one `cn-run validate` run shows them all) and the one pass
//! over the sections; the sections themselves are resolved in `resolve_sections`,
//! `resolve_model` and `resolve_net`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{JobError, Problem, sorted};
use super::file::{DurationSpec, JobFile};
use super::load::{LoadOptions, problem};
use super::locate::{Locator, Pos};
use super::resolve_model::model;
use super::resolve_net::{bash_network, bash_network_hosts};
use super::resolve_sections::{
    checks, git_settings, limits, output_schema, params, rules, workspace,
};
use super::template::Context;
use super::units::parse_duration;
use super::{Job, PermissionSpec, ToolSettings};

pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) label: &'a str,
    pub(super) loc: &'a Locator,
    pub(super) base: PathBuf,
    /// Parameters the job declares: a reference to one is never "undeclared" (one without
    /// a value is reported once, as a required parameter).
    pub(super) declared: Vec<String>,
    pub(super) problems: Vec<Problem>,
    /// See [`LoadOptions::kept_files`].
    pub(super) kept: Option<&'a BTreeMap<String, String>>,
    /// The files the job named, as read now (kept by a run for its resumes).
    pub(super) read: BTreeMap<String, String>,
}

impl Ctx<'_> {
    pub(super) fn push(&mut self, field: &str, message: String) {
        let pos = self.loc.value(field);
        self.problems.push(problem(self.label, pos, field, message));
    }

    /// A file the job names, relative to the job file: the text the first run read when
    /// resuming, else the file on disk (recorded in [`Job::files_read`]).
    pub(super) fn read_file(&mut self, rel: &str) -> Result<String, String> {
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

    /// Render a template as `context` (shell text: each parameter one shell word unless
    /// `| raw`); unknown parameters are reported where the `{{` is in the file.
    pub(super) fn render(
        &mut self,
        field: &str,
        template: &str,
        values: &BTreeMap<String, String>,
        context: Context,
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
    pub(super) fn find_in_text(&self, field: &str, needle: &str) -> Option<Pos> {
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
        Some(cx.render("prompt", &raw.prompt, &params, Context::Text))
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
