//! A repository's own hook settings, found where Continue's `cn` finds them (its
//! `hooks/hookConfig.ts`): `.claude/settings.json`, `.continue/settings.json`,
//! `.claude/settings.local.json` and `.continue/settings.local.json` under the workspace,
//! in that order, every file's hooks added after the previous ones. The files in a home
//! directory that `cn` also reads are the runner's, not the repository's: a run's hooks
//! come from its job and, when it opts in, its repository — never from the machine.
//!
//! The files were written for another tool, so they are read leniently: an event cn-run
//! does not fire and a hook of a type other than `command` are skipped with a warning; a
//! file that says `disableAllHooks: true` turns the repository's hooks off (the job's
//! still run: a repository never switches off its job's policy). The caller reads them
//! only in trusted mode and when the job says `repo_hooks: true`.

use std::path::Path;

use serde_json::Value;

use super::config::{
    HookCommand, HookDef, HookEvent, HookOrigin, HooksSection, MatcherGroup, flatten,
};

/// The repository's settings files, in the order their hooks are added.
pub const SETTINGS_FILES: [&str; 4] = [
    ".claude/settings.json",
    ".continue/settings.json",
    ".claude/settings.local.json",
    ".continue/settings.local.json",
];

/// Why a repository settings file gave no hooks.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not valid JSON: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path}: {at}: {source}")]
    Shape {
        path: String,
        at: String,
        source: serde_json::Error,
    },
    #[error("{path}: a symbolic link; not read")]
    Link { path: String },
}

/// What one settings file says about hooks.
#[derive(Debug, Default)]
pub struct Settings {
    pub section: HooksSection,
    /// What was skipped, for warnings.
    pub notes: Vec<String>,
    /// `disableAllHooks: true`.
    pub disabled: bool,
}

/// The repository's hooks under `workspace`, and warnings (files not read, hooks skipped).
pub fn repository_hooks(workspace: &Path) -> (Vec<HookDef>, Vec<String>) {
    hooks_of_files(|name| {
        let path = workspace.join(name);
        std::fs::symlink_metadata(&path).ok()?;
        Some(read_settings(&path, name))
    })
}

/// The repository's hooks from the settings files' `kept` text (file name → text), as a
/// run kept them at its start: what a resume runs, whatever the workspace holds now.
pub fn kept_repository_hooks(
    kept: &std::collections::BTreeMap<String, String>,
) -> (Vec<HookDef>, Vec<String>) {
    hooks_of_files(|name| kept.get(name).map(|text| parse_settings(text, name)))
}

/// The hooks of every settings file `settings` gives (`None`: no such file), in order.
fn hooks_of_files(
    settings: impl Fn(&str) -> Option<Result<Settings, SettingsError>>,
) -> (Vec<HookDef>, Vec<String>) {
    let mut defs = Vec::new();
    let mut warnings = Vec::new();
    let mut disabled_by = None;
    for name in SETTINGS_FILES {
        match settings(name) {
            None => {}
            Some(Ok(s)) => {
                warnings.extend(s.notes);
                if s.disabled {
                    disabled_by.get_or_insert(name);
                }
                defs.extend(flatten(&s.section, HookOrigin::Repository));
            }
            Some(Err(e)) => warnings.push(format!("repository hooks not run: {e}")),
        }
    }
    if let Some(name) = disabled_by {
        warnings.push(format!(
            "{name}: disableAllHooks: the repository's hooks do not run (the job's do)"
        ));
        defs.clear();
    }
    (defs, warnings)
}

/// The text of the settings file `name` under `workspace` when it is a regular file (a
/// link is never read), for a run to keep at its start.
pub fn settings_text(workspace: &Path, name: &str) -> Option<String> {
    let path = workspace.join(name);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    meta.file_type()
        .is_file()
        .then(|| std::fs::read_to_string(&path).ok())
        .flatten()
}

/// The hooks of a Claude-style settings file at `path` (`{"hooks": {...}, ...}`; other
/// keys are not cn-run's business), named `shown` in messages.
pub fn read_settings(path: &Path, shown: &str) -> Result<Settings, SettingsError> {
    let shown = shown.to_owned();
    let meta = std::fs::symlink_metadata(path).map_err(|source| SettingsError::Read {
        path: shown.clone(),
        source,
    })?;
    if meta.file_type().is_symlink() {
        return Err(SettingsError::Link { path: shown });
    }
    let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Read {
        path: shown.clone(),
        source,
    })?;
    parse_settings(&text, &shown)
}

/// The hooks of a settings file's `text`, named `shown` in messages.
pub fn parse_settings(text: &str, shown: &str) -> Result<Settings, SettingsError> {
    let shown = shown.to_owned();
    let value: Value = serde_json::from_str(text).map_err(|source| SettingsError::Json {
        path: shown.clone(),
        source,
    })?;
    let mut out = Settings {
        disabled: value.get("disableAllHooks").and_then(Value::as_bool) == Some(true),
        ..Settings::default()
    };
    let Some(hooks) = value.get("hooks").and_then(Value::as_object) else {
        return Ok(out);
    };
    for (name, groups) in hooks {
        let Some(event) = HookEvent::parse(name) else {
            out.notes.push(format!(
                "{shown}: hooks.{name} is not an event cn-run fires; skipped"
            ));
            continue;
        };
        let groups = command_groups(&shown, name, groups, &mut out.notes)?;
        out.section.entry(event).or_default().extend(groups);
    }
    Ok(out)
}

/// The matcher groups of one event, each keeping only its `command` hooks.
fn command_groups(
    shown: &str,
    event: &str,
    groups: &Value,
    notes: &mut Vec<String>,
) -> Result<Vec<MatcherGroup>, SettingsError> {
    let shape = |at: String| {
        move |source| SettingsError::Shape {
            path: shown.to_owned(),
            at,
            source,
        }
    };
    let raw: Vec<Value> =
        serde_json::from_value(groups.clone()).map_err(shape(format!("hooks.{event}")))?;
    let mut out = Vec::new();
    for (i, group) in raw.iter().enumerate() {
        let at = format!("hooks.{event}[{i}]");
        let matcher: Option<String> = serde_json::from_value(group["matcher"].clone())
            .map_err(shape(format!("{at}.matcher")))?;
        let entries = group["hooks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let mut hooks = Vec::new();
        for (j, entry) in entries.iter().enumerate() {
            let kind = entry["type"].as_str().unwrap_or_default();
            if kind != "command" {
                notes.push(format!(
                    "{shown}: {at}.hooks[{j}]: a `{kind}` hook; cn-run runs only \
                     `type: command` hooks, so this one is skipped"
                ));
                continue;
            }
            let hook: HookCommand = serde_json::from_value(command_only(entry))
                .map_err(shape(format!("{at}.hooks[{j}]")))?;
            hooks.push(hook);
        }
        if !hooks.is_empty() {
            out.push(MatcherGroup { matcher, hooks });
        }
    }
    Ok(out)
}

/// A command hook's fields cn-run reads (Claude Code's `async`, `statusMessage`, `once`
/// and the like change nothing a run can honour, so they are left out, not refused).
fn command_only(entry: &Value) -> Value {
    let mut kept = serde_json::Map::new();
    for key in ["type", "command", "timeout"] {
        if let Some(v) = entry.get(key) {
            kept.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(kept)
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
