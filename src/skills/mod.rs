//! Skills: folders holding a `SKILL.md` (YAML front matter with `name` and `description`,
//! then instructions) and any files those instructions refer to.
//!
//! Only each skill's name and description go into the prompt (in the Skills tool's
//! description); the model loads a skill's full text with the tool when a task calls for it.
//! Skills are found in `.continue/skills/`, `.claude/skills/` and the job's `skills:` paths;
//! in untrusted mode those inside the repository are read from the trusted base commit.

mod base;
mod tool;

pub use base::discover_at_base;
pub use tool::SkillsTool;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// A larger SKILL.md is skipped: it would not fit in a tool result anyway.
const MAX_SKILL_BYTES: u64 = 512 * 1024;
/// At most this many other files of one skill are listed.
const MAX_FILES: usize = 200;
/// How deep the file listing of a skill folder goes.
pub(crate) const MAX_DEPTH: usize = 4;

/// One skill, as discovered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The skill's folder.
    pub dir: PathBuf,
    /// SKILL.md without its front matter.
    pub body: String,
    /// The other files of the folder, relative to it, `/`-separated and sorted.
    pub files: Vec<String>,
}

#[derive(Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
}

/// Every skill under `<workspace>/.continue/skills/`, `<workspace>/.claude/skills/` and
/// `extra_dirs` (relative ones are taken from the workspace), in that order. A folder in one
/// of those directories is a skill when it holds a SKILL.md; an extra dir that itself holds
/// one is a skill too. When two skills share a name the first one found is kept.
pub fn discover(workspace: &Path, extra_dirs: &[PathBuf]) -> Vec<Skill> {
    let mut roots = vec![
        (workspace.join(".continue/skills"), false),
        (workspace.join(".claude/skills"), false),
    ];
    roots.extend(extra_dirs.iter().map(|d| (workspace.join(d), true)));
    let found = roots
        .into_iter()
        .flat_map(|(root, from_job)| skill_dirs(&root, from_job))
        .filter_map(|dir| load(&dir));
    first_of_each_name(found)
}

/// The skills in order, without those whose name an earlier one has (with a warning).
fn first_of_each_name(found: impl IntoIterator<Item = Skill>) -> Vec<Skill> {
    let mut skills: Vec<Skill> = Vec::new();
    let mut names = HashSet::new();
    for skill in found {
        if names.insert(skill.name.clone()) {
            skills.push(skill);
        } else {
            tracing::warn!(path = %skill.dir.display(), "skill \"{}\" skipped: another skill has that name", skill.name);
        }
    }
    skills
}

/// The skill folders of one root, sorted by name.
fn skill_dirs(root: &Path, from_job: bool) -> Vec<PathBuf> {
    if root.join(SKILL_FILE).is_file() {
        return vec![root.to_path_buf()];
    }
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) => {
            if from_job {
                tracing::warn!(path = %root.display(), "skills directory unreadable: {e}");
            }
            return Vec::new();
        }
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(SKILL_FILE).is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Read one skill folder; `None` (with a warning) when its SKILL.md is unusable.
fn load(dir: &Path) -> Option<Skill> {
    let path = dir.join(SKILL_FILE);
    let skip = |why: &str| tracing::warn!(path = %path.display(), "skill skipped: {why}");
    match std::fs::metadata(&path) {
        Ok(m) if m.len() > MAX_SKILL_BYTES => {
            skip(&format!("larger than {MAX_SKILL_BYTES} bytes"));
            return None;
        }
        Ok(_) => {}
        Err(e) => {
            skip(&e.to_string());
            return None;
        }
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            skip(&e.to_string());
            return None;
        }
    };
    let skill = parse(&text).map_err(|why| skip(&why.to_string())).ok()?;
    Some(assemble(skill, dir.to_path_buf(), list_files(dir)))
}

/// A skill from its parsed SKILL.md, its folder and its other files.
fn assemble(
    ((name, description), body): ((String, String), String),
    dir: PathBuf,
    files: Vec<String>,
) -> Skill {
    Skill {
        name,
        description,
        dir,
        body,
        files,
    }
}

/// Why a SKILL.md is skipped (with a warning naming its path).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SkillFileError {
    #[error("no front matter (the file must start with a `---` line)")]
    NoFrontMatter,
    #[error("the front matter has no closing `---` line")]
    Unclosed,
    #[error("bad front matter: {0}")]
    Yaml(#[source] serde_yaml::Error),
    #[error("the front matter has no `{0}`")]
    Missing(&'static str),
    #[error("the skill name spans several lines")]
    MultilineName,
}

/// Split SKILL.md into `(name, description)` and the body.
fn parse(text: &str) -> Result<((String, String), String), SkillFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(SkillFileError::NoFrontMatter);
    }
    let mut yaml = String::new();
    let mut consumed = first.len();
    let mut closed = false;
    for line in lines {
        consumed += line.len();
        if matches!(line.trim_end(), "---" | "...") {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err(SkillFileError::Unclosed);
    }
    let front: FrontMatter = serde_yaml::from_str(&yaml).map_err(SkillFileError::Yaml)?;
    let field = |value: Option<String>, key| match value.map(|v| v.trim().to_owned()) {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(SkillFileError::Missing(key)),
    };
    let name = field(front.name, "name")?;
    let description = field(front.description, "description")?;
    if name.contains(['\n', '\r']) {
        return Err(SkillFileError::MultilineName);
    }
    Ok(((name, description), text[consumed..].trim().to_owned()))
}

/// The folder's files other than SKILL.md, skipping hidden entries and symlinked folders.
fn list_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((current, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() && path.is_dir() {
                continue;
            }
            if kind.is_dir() {
                if depth + 1 < MAX_DEPTH {
                    stack.push((path, depth + 1));
                }
            } else if let Ok(rel) = path.strip_prefix(dir) {
                let rel = rel.to_string_lossy().replace('\\', "/");
                if rel != SKILL_FILE {
                    files.push(rel);
                }
            }
        }
    }
    files.sort();
    files.truncate(MAX_FILES);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_body_are_split() {
        let text =
            "---\nname: pdf\ndescription: Work with PDF files\nlicense: MIT\n---\n\n# PDF\nSteps\n";
        let ((name, description), body) = parse(text).unwrap();
        assert_eq!(name, "pdf");
        assert_eq!(description, "Work with PDF files");
        assert_eq!(body, "# PDF\nSteps");
    }

    #[test]
    fn missing_fields_and_missing_front_matter_are_rejected() {
        assert!(
            parse("# no front matter\n")
                .unwrap_err()
                .to_string()
                .contains("no front matter")
        );
        assert!(
            parse("---\nname: x\n---\nbody")
                .unwrap_err()
                .to_string()
                .contains("description")
        );
        assert!(
            parse("---\nname: x\ndescription: y\n")
                .unwrap_err()
                .to_string()
                .contains("closing")
        );
        assert!(parse("---\r\nname: x\r\ndescription: y\r\n---\r\nbody").is_ok());
    }
}
