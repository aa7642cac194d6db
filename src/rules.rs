//! Rules: instructions added to the system message. Inline job rules always apply; rule
//! files (the job's `rules: [{file: …}]` and `.continue/rules/**/*.md` in the workspace)
//! may carry front matter — `alwaysApply`, `globs`, `regex`, `description`, `invokable` —
//! as in Continue. Always-apply rules are in every system message. Rules with `globs` or
//! `regex` apply once the run touches a matching file (Read, Write, Edit, MultiEdit): they
//! join the system message from the next turn on, once. Continue never applies those in
//! its CLI; cn-run does, because a CI job's rules are written for the files it edits.

use std::path::Path;

use globset::{Glob, GlobMatcher};
use serde::Deserialize;

/// When a rule applies.
#[derive(Debug, Clone)]
pub enum Applies {
    Always,
    /// When a touched file matches one of the globs (workspace-relative; a pattern with no
    /// `/` matches the file name) or its content matches one of the regexes.
    OnTouch {
        globs: Vec<(String, GlobMatcher)>,
        regex: Vec<regex::Regex>,
    },
    /// Never in a headless run (`invokable` rules are slash commands in Continue, and
    /// `alwaysApply: false` without globs has nothing to trigger it).
    Never(&'static str),
}

/// One rule.
#[derive(Debug, Clone)]
pub struct RuleDef {
    pub name: String,
    /// `inline`, or the file it came from.
    pub origin: crate::events::RuleOrigin,
    pub text: String,
    pub applies: Applies,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FrontMatter {
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    globs: Option<OneOrMany>,
    regex: Option<OneOrMany>,
    always_apply: Option<bool>,
    #[serde(default)]
    invokable: bool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => s
                .split(',')
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect(),
            OneOrMany::Many(v) => v,
        }
    }
}

/// Split `---` front matter from the body.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let trimmed = text.trim_start_matches('\u{feff}');
    let Some(rest) = trimmed.strip_prefix("---") else {
        return (None, text);
    };
    let rest = rest
        .trim_start_matches([' ', '\t'])
        .strip_prefix('\n')
        .or_else(|| rest.strip_prefix("\r\n"));
    let Some(rest) = rest else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, text)
}

/// What is wrong with a rule file (the job loader locates it at `rules[i].file`; a
/// repository rule is skipped with a warning).
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("front matter: {0}")]
    FrontMatter(#[source] serde_yaml::Error),
    #[error("glob `{glob}`: {source}")]
    Glob {
        glob: String,
        source: globset::Error,
    },
    #[error("regex `{regex}`: {source}")]
    Regex { regex: String, source: regex::Error },
}

/// Parse a rule file's text. `Err` says what is wrong with its front matter.
pub fn parse_rule(origin: &str, text: &str) -> Result<RuleDef, RuleError> {
    let (front, body) = split_front_matter(text);
    let fm: FrontMatter = match front {
        Some(yaml) if !yaml.trim().is_empty() => {
            serde_yaml::from_str(yaml).map_err(RuleError::FrontMatter)?
        }
        _ => FrontMatter::default(),
    };
    let globs = fm.globs.map(OneOrMany::into_vec).unwrap_or_default();
    let regexes = fm.regex.map(OneOrMany::into_vec).unwrap_or_default();
    let mut glob_matchers = Vec::new();
    for g in &globs {
        let pattern = if g.contains('/') {
            g.trim_start_matches("./").to_owned()
        } else {
            format!("**/{g}")
        };
        let m = Glob::new(&pattern)
            .map_err(|source| RuleError::Glob {
                glob: g.clone(),
                source,
            })?
            .compile_matcher();
        glob_matchers.push((g.clone(), m));
    }
    let mut regex = Vec::new();
    for r in &regexes {
        regex.push(regex::Regex::new(r).map_err(|source| RuleError::Regex {
            regex: r.clone(),
            source,
        })?);
    }
    let applies = if fm.invokable {
        Applies::Never("invokable rules are slash commands, not used headless")
    } else if fm.always_apply == Some(true) {
        Applies::Always
    } else if !glob_matchers.is_empty() || !regex.is_empty() {
        Applies::OnTouch {
            globs: glob_matchers,
            regex,
        }
    } else if fm.always_apply == Some(false) {
        Applies::Never("alwaysApply is false and there is no glob or regex to trigger it")
    } else {
        Applies::Always
    };
    let name = fm.name.unwrap_or_else(|| {
        let p = Path::new(origin);
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match p.parent().and_then(|d| d.file_name()) {
            Some(dir) => format!("{}/{stem}", dir.to_string_lossy()),
            None => stem,
        }
    });
    let _ = fm.description;
    Ok(RuleDef {
        name,
        origin: crate::events::RuleOrigin::File(origin.to_owned()),
        text: body.trim().to_owned(),
        applies,
    })
}

/// The rules in `.continue/rules/**/*.md` of the repository files (the workspace, or a
/// trusted base commit), sorted by path.
pub fn workspace_rules(repo: &crate::repo_files::RepoFiles) -> (Vec<RuleDef>, Vec<String>) {
    let (mut rules, mut warnings) = (Vec::new(), Vec::new());
    for (origin, text) in repo.markdown_under(".continue/rules") {
        match parse_rule(&origin, &text) {
            Ok(r) if !r.text.is_empty() => rules.push(r),
            Ok(_) => {}
            Err(e) => warnings.push(format!("rule {} is ignored: {e}", repo.describe(&origin))),
        }
    }
    (rules, warnings)
}

impl RuleDef {
    /// Why this rule applies to `path` (workspace-relative), if it does. `content` is
    /// read only when a regex needs it.
    pub fn matches_touch(
        &self,
        rel_path: &Path,
        content: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        let Applies::OnTouch { globs, regex } = &self.applies else {
            return None;
        };
        if let Some((g, _)) = globs.iter().find(|(_, m)| m.is_match(rel_path)) {
            return Some(format!("{} matches `{g}`", rel_path.display()));
        }
        if regex.is_empty() {
            return None;
        }
        let text = content()?;
        regex.iter().find(|r| r.is_match(&text)).map(|r| {
            format!(
                "{} contains a match of `{}`",
                rel_path.display(),
                r.as_str()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_decides_when_a_rule_applies() {
        let always = parse_rule(".continue/rules/a.md", "Be brief.").unwrap();
        assert!(matches!(always.applies, Applies::Always));
        assert_eq!(always.name, "rules/a");
        let glob = parse_rule(
            "r.md",
            "---\nname: rust\nglobs: \"*.rs\"\n---\nUse anyhow.\n",
        )
        .unwrap();
        assert_eq!(glob.name, "rust");
        assert_eq!(glob.text, "Use anyhow.");
        assert!(
            glob.matches_touch(Path::new("src/deep/main.rs"), || None)
                .is_some()
        );
        assert!(
            glob.matches_touch(Path::new("README.md"), || None)
                .is_none()
        );
        let re = parse_rule(
            "r.md",
            "---\nregex: \"unsafe\\\\s*\\\\{\"\n---\nExplain unsafe.",
        )
        .unwrap();
        assert!(
            re.matches_touch(Path::new("a.rs"), || Some("fn f() { unsafe { } }".into()))
                .is_some()
        );
        assert!(
            re.matches_touch(Path::new("a.rs"), || Some("safe".into()))
                .is_none()
        );
        let never = parse_rule("r.md", "---\nalwaysApply: false\n---\nx").unwrap();
        assert!(matches!(never.applies, Applies::Never(_)));
        let inv = parse_rule("r.md", "---\ninvokable: true\n---\nx").unwrap();
        assert!(matches!(inv.applies, Applies::Never(_)));
        assert!(parse_rule("r.md", "---\nglobs: [\"a[\"]\n---\nx").is_err());
    }
}
