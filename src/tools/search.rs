//! The Search tool: a regex search over the workspace, in process, with ripgrep's own
//! crates (`ignore` for the walk, `grep-regex` and `grep-searcher` for matching), so it
//! behaves like `rg` without needing the binary.
//!
//! `.gitignore` (and `.ignore`) files are honoured even outside a git repository, hidden
//! files and binary files are skipped, `file_pattern` is an `rg -g` glob. At most 100
//! matching lines are shown, each cut to 500 characters, with a note saying what was cut.
//! Credential files found by the walk are not searched (reading them needs permission),
//! nor anything the file tools' one view refuses (`tools::view`); each file is opened
//! under the searched folder without following a symlink, so a folder swapped for a
//! symlink during the walk is not searched through.

use std::os::fd::OwnedFd;
use std::path::Path;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use serde_json::Value;

use super::grant::Grant;
use super::view::{Access, judge, locate, shown};
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, str_arg};
use crate::catalog;
use crate::nofollow;
use crate::permissions::{GIT_INTERNALS_RULE, Permission, UNSEEN_RULE};

super::catalogued!(pub struct Search => catalog::SEARCH);

/// Matching lines shown to the model.
const MAX_RESULTS: usize = 100;
/// Characters kept of one matching line.
const MAX_LINE_CHARS: usize = 500;
/// Counting stops here, so a pattern matching everything in a huge tree stays cheap.
const COUNT_LIMIT: usize = 10_000;
/// A file whose single line would need more memory than this is skipped.
const HEAP_LIMIT: usize = 64 * 1024 * 1024;

#[async_trait::async_trait]
impl Tool for Search {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = Query {
            pattern: str_arg(&args, "pattern")?.to_owned(),
            path: optional_str(&args, "path")?,
            file_pattern: optional_str(&args, "file_pattern")?,
        };
        ctx.blocking("search", move |shared, grant| search(&query, shared, grant))
            .await
    }
}

struct Query {
    pattern: String,
    path: Option<String>,
    file_pattern: Option<String>,
}

/// An optional string argument; empty counts as absent.
fn optional_str(args: &Value, name: &str) -> Result<Option<String>, ToolError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(_) => str_arg(args, name).map(|s| Some(s.to_owned())),
    }
}

/// What the walk found.
#[derive(Default)]
struct Found {
    lines: Vec<String>,
    total: usize,
    skipped_sensitive: usize,
    unreadable: usize,
}

fn search(query: &Query, shared: &ToolShared, grant: &Grant) -> Result<ToolOutput, ToolError> {
    let raw_path = query.path.as_deref().unwrap_or(".");
    let at = locate(shared, grant, raw_path, Access::Read, false)?;
    let missing = || ToolError::RespondToModel(format!("Path does not exist: {raw_path}"));
    let root_fd = match nofollow::kind_of(&at.dir, &at.name) {
        Ok(Some((rustix::fs::FileType::Directory, _))) => {
            nofollow::open_dir_under(&at.dir, Path::new(&at.name), false).map_err(|_| missing())?
        }
        Ok(Some(_)) => at.dir,
        _ => return Err(missing()),
    };
    let root = at.real;
    let matcher = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(&query.pattern)
        .map_err(|e| {
            ToolError::RespondToModel(format!(
                "Invalid regular expression {:?}: {e}\nThe pattern uses Rust regex syntax; put \
                 a backslash before characters such as ( ) [ ] {{ }} . * + ? | to match them \
                 literally.",
                query.pattern
            ))
        })?;
    let walk = walker(&root, query.file_pattern.as_deref())?;
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .heap_limit(Some(HEAP_LIMIT))
        .build();
    let mut found = Found::default();
    for entry in walk {
        if found.total >= COUNT_LIMIT || shared.cancel.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else {
            found.unreadable += 1;
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let shown = shown(shared, entry.path());
        if entry.depth() > 0 {
            match refused(shared, grant, &shown, entry.path()) {
                Skip::No => {}
                Skip::Sensitive => {
                    found.skipped_sensitive += 1;
                    continue;
                }
                Skip::Quietly => continue,
            }
        }
        let Some(file) = open_under(&root_fd, &root, entry.path()) else {
            found.unreadable += 1;
            continue;
        };
        let sink = Lossy(|line_no, text: &str| {
            found.total += 1;
            if found.lines.len() < MAX_RESULTS {
                found
                    .lines
                    .push(format!("{shown}:{line_no}:{}", cut_line(text)));
            }
            Ok(found.total < COUNT_LIMIT)
        });
        if searcher.search_file(&matcher, &file, sink).is_err() {
            found.unreadable += 1;
        }
    }
    Ok(ToolOutput::text(render(query, &found)))
}

/// Why a file the walk found is not searched.
enum Skip {
    No,
    /// A credential file, hidden location or process file: counted in the result.
    Sensitive,
    /// Inside `.git` when the search was not of `.git` itself.
    Quietly,
}

fn refused(shared: &ToolShared, grant: &Grant, shown: &str, path: &Path) -> Skip {
    match judge(shared, shown, path, Access::Read) {
        None => Skip::No,
        Some(t) if t.permission == Permission::Exclude || t.rule == "tool.sensitive_file" => {
            Skip::Sensitive
        }
        Some(t) if t.rule == GIT_INTERNALS_RULE && !grant.lifts(GIT_INTERNALS_RULE) => {
            Skip::Quietly
        }
        Some(t) if t.rule == UNSEEN_RULE && !grant.lifts(UNSEEN_RULE) => Skip::Sensitive,
        Some(_) => Skip::No,
    }
}

/// The file at `path` (under the searched folder `root`, open as `root_fd`), opened
/// without following a symlink on the way; a file the search was given is `root` itself.
fn open_under(root_fd: &OwnedFd, root: &Path, path: &Path) -> Option<std::fs::File> {
    let rel = path.strip_prefix(root).ok()?;
    if rel.as_os_str().is_empty() {
        return nofollow::open_file(root_fd, root.file_name()?, false).ok();
    }
    let dir = nofollow::open_dir_under(root_fd, rel.parent()?, false).ok()?;
    let file = nofollow::open_file(&dir, rel.file_name()?, false).ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// The sorted walk under `root`: ignore files honoured (no git needed), hidden files
/// skipped, only files matching `glob` (an `rg -g` glob) when given.
fn walker(root: &Path, glob: Option<&str>) -> Result<ignore::Walk, ToolError> {
    let mut walk = WalkBuilder::new(root);
    walk.require_git(false).sort_by_file_path(Path::cmp);
    if let Some(glob) = glob {
        let bad = |e: ignore::Error| {
            ToolError::RespondToModel(format!("Invalid file_pattern {glob:?}: {e}"))
        };
        let mut ov = OverrideBuilder::new(root);
        ov.add(glob).map_err(bad)?;
        walk.overrides(ov.build().map_err(bad)?);
    }
    Ok(walk.build())
}

/// One matching line without its line ending, cut to [`MAX_LINE_CHARS`].
fn cut_line(text: &str) -> String {
    let line = text.trim_end_matches(['\n', '\r']);
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.to_owned(),
        Some((at, _)) => {
            let rest = line[at..].chars().count();
            format!("{} [… {rest} more characters]", &line[..at])
        }
    }
}

fn render(query: &Query, found: &Found) -> String {
    let scope = query
        .file_pattern
        .as_ref()
        .map_or_else(String::new, |g| format!(" in files matching {g:?}"));
    let mut text = if found.total == 0 {
        format!("No matches found for pattern {:?}{scope}.", query.pattern)
    } else {
        let mut t = format!("Search results for pattern {:?}{scope}:\n\n", query.pattern);
        t.push_str(&found.lines.join("\n"));
        t
    };
    if found.total > found.lines.len() {
        let of = if found.total >= COUNT_LIMIT {
            format!("more than {COUNT_LIMIT}")
        } else {
            found.total.to_string()
        };
        text.push_str(&format!(
            "\n\n[Results truncated: showing {} of {of} matches; narrow the pattern, path or file_pattern]",
            found.lines.len()
        ));
    }
    if found.skipped_sensitive > 0 {
        text.push_str(&format!(
            "\n[{} credential-like files (.env, keys, …) were not searched]",
            found.skipped_sensitive
        ));
    }
    if found.unreadable > 0 {
        text.push_str(&format!(
            "\n[{} files or directories could not be read]",
            found.unreadable
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_with_a_count() {
        let line = format!("{}\n", "é".repeat(MAX_LINE_CHARS + 7));
        let cut = cut_line(&line);
        assert!(cut.ends_with("[… 7 more characters]"), "{cut}");
        assert_eq!(cut.chars().filter(|c| *c == 'é').count(), MAX_LINE_CHARS);
    }
}
