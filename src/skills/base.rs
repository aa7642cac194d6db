//! Skills in untrusted mode: the pull request's tree must not choose what the model is told
//! to follow, so skills inside the repository are read from the trusted base commit (blobs
//! read in-process by libgit2, no git program run), never from the working tree.

use std::path::{Path, PathBuf};

use super::{MAX_DEPTH, MAX_FILES, MAX_SKILL_BYTES, SKILL_FILE, Skill};
use crate::repo_files::RepoFiles;

/// Where one skills folder is read from.
enum Place {
    /// A folder of the repository, relative to the workspace: read at the base commit.
    Base(String),
    /// A folder outside the repository (named by the job file): read from disk.
    Disk(PathBuf),
}

/// The skills of `.continue/skills/`, `.claude/skills/` and `extra_dirs` as they are in the
/// base commit of `files`. An extra folder outside the workspace but inside the repository
/// is skipped with a warning; one outside the repository is read from disk.
pub fn discover_at_base(files: &RepoFiles, workspace: &Path, extra_dirs: &[PathBuf]) -> Vec<Skill> {
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut places = vec![
        Place::Base(".continue/skills".into()),
        Place::Base(".claude/skills".into()),
    ];
    places.extend(extra_dirs.iter().filter_map(|d| place(files, &ws, d)));
    let found = places.into_iter().flat_map(|place| match place {
        Place::Base(root) => base_skills(files, &ws, &root),
        Place::Disk(root) => super::skill_dirs(&root, true)
            .iter()
            .filter_map(|dir| super::load(dir))
            .collect(),
    });
    super::first_of_each_name(found)
}

fn place(files: &RepoFiles, ws: &Path, dir: &Path) -> Option<Place> {
    let dir = dir
        .canonicalize()
        .unwrap_or_else(|_| crate::tools::paths::normalize(&ws.join(dir)));
    if let Ok(rel) = dir.strip_prefix(ws) {
        let rel = rel.to_string_lossy().replace('\\', "/");
        return Some(Place::Base(rel));
    }
    if files.repo_root().is_some_and(|top| dir.starts_with(top)) {
        tracing::warn!(path = %dir.display(), "skills folder skipped in untrusted mode: it is in the repository but outside the workspace");
        return None;
    }
    Some(Place::Disk(dir))
}

/// The skills under `root` at the base commit: `root` itself when it holds a SKILL.md, else
/// each folder directly in it that does, in name order.
fn base_skills(files: &RepoFiles, ws: &Path, root: &str) -> Vec<Skill> {
    let root = root.trim_end_matches('/');
    let paths = files.paths_under(root);
    let own = under(root, SKILL_FILE);
    let dirs: Vec<String> = if paths.contains(&own) {
        vec![root.to_owned()]
    } else {
        paths
            .iter()
            .filter_map(|p| p.strip_prefix(&under(root, "")))
            .filter_map(|p| p.strip_suffix(&format!("/{SKILL_FILE}")))
            .filter(|name| !name.contains('/'))
            .map(|name| under(root, name))
            .collect()
    };
    dirs.iter()
        .filter_map(|dir| base_skill(files, ws, dir, &paths))
        .collect()
}

/// One skill folder at the base commit; `None` (with a warning) when its SKILL.md is unusable.
fn base_skill(files: &RepoFiles, ws: &Path, dir: &str, paths: &[String]) -> Option<Skill> {
    let shown = files.describe(&under(dir, SKILL_FILE));
    let skip = |why: &str| tracing::warn!(path = %shown, "skill skipped: {why}");
    let Some(text) = files.read(&under(dir, SKILL_FILE)) else {
        skip("not readable as UTF-8 text at the base commit");
        return None;
    };
    if text.len() as u64 > MAX_SKILL_BYTES {
        skip(&format!("larger than {MAX_SKILL_BYTES} bytes"));
        return None;
    }
    let parsed = super::parse(&text)
        .map_err(|why| skip(&why.to_string()))
        .ok()?;
    let prefix = under(dir, "");
    let other: Vec<String> = paths
        .iter()
        .filter_map(|p| p.strip_prefix(&prefix))
        .filter(|rel| *rel != SKILL_FILE && rel.matches('/').count() < MAX_DEPTH)
        .filter(|rel| !rel.split('/').any(|part| part.starts_with('.')))
        .take(MAX_FILES)
        .map(str::to_owned)
        .collect();
    Some(super::assemble(parsed, ws.join(dir), other))
}

/// `name` in the folder `dir` (relative to the workspace; `""` is the workspace itself).
fn under(dir: &str, name: &str) -> String {
    match dir {
        "" => name.to_owned(),
        _ => format!("{dir}/{name}"),
    }
}
