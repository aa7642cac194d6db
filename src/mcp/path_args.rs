//! Which arguments of an MCP call name files, so that the rules binding the built-in Write
//! (a path outside the workspace, inside `.git`, or a credential file needs permission) bind
//! an MCP tool that a rule allows, too.
//!
//! A string is taken as a path when its property (at any depth) is named like one — `path`,
//! `file`, `filename`, `uri`, `destination`, `source`, `target`, `dir`, `directory`, `folder`,
//! `root`, `cwd`, `location`, `output`, or ends in `path`, `file`, `filename`, `dir` (case,
//! `_` and `-` ignored) — or when it is a `file://` URI under any name. A `file://` URI is
//! read as its path; `~` and `~/…` as the home folder the run gives stdio servers; a
//! relative path as relative to the workspace, where cn-run starts stdio servers.

use std::path::Path;

use serde_json::Value;

/// Property names that hold a path (after lower-casing and dropping `_` and `-`).
const PATH_KEYS: &[&str] = &[
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "filenames",
    "uri",
    "uris",
    "destination",
    "dest",
    "source",
    "src",
    "target",
    "dir",
    "directory",
    "folder",
    "root",
    "cwd",
    "location",
    "output",
    "out",
];
/// Endings of property names that hold a path (`file_path`, `newPath`, `output_dir`).
const PATH_ENDINGS: &[&str] = &["path", "paths", "file", "filename", "dir", "directory"];
/// How deep arguments are searched.
const MAX_DEPTH: usize = 8;

/// The paths `args` names, as the file system would read them (URIs and `~` resolved).
pub(crate) fn named_paths(args: &Value, home: Option<&Path>) -> Vec<String> {
    let mut out = Vec::new();
    collect(args, false, home, 0, &mut out);
    out
}

fn collect(
    value: &Value,
    path_key: bool,
    home: Option<&Path>,
    depth: usize,
    out: &mut Vec<String>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::String(s)
            if path_key || s.trim_start().to_ascii_lowercase().starts_with("file:") =>
        {
            out.push(as_path(s.trim(), home));
        }
        Value::Array(items) => {
            for item in items {
                collect(item, path_key, home, depth + 1, out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                collect(item, is_path_key(key), home, depth + 1, out);
            }
        }
        _ => {}
    }
}

fn is_path_key(key: &str) -> bool {
    let key: String = key
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    PATH_KEYS.contains(&key.as_str()) || PATH_ENDINGS.iter().any(|e| key.ends_with(e))
}

/// `raw` as a file-system path: `file://host/p` → `/p` (percent-decoded), `~/p` → `$HOME/p`.
fn as_path(raw: &str, home: Option<&Path>) -> String {
    let lower = raw.to_ascii_lowercase();
    let raw = if lower.starts_with("file:") {
        let rest = &raw["file:".len()..];
        let rest = match rest.strip_prefix("//") {
            // `file://localhost/p`, `file:///p`: the path starts at the first `/`.
            Some(authority) => authority.find('/').map_or("/", |at| &authority[at..]),
            None => rest,
        };
        percent_encoding::percent_decode_str(rest)
            .decode_utf8_lossy()
            .into_owned()
    } else {
        raw.to_owned()
    };
    match (home, raw.strip_prefix('~')) {
        (Some(home), Some(rest)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", home.display())
        }
        _ => raw,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn path_like_properties_and_file_uris_are_found_at_any_depth() {
        let home = Path::new("/home/u");
        let args = json!({
            "path": "a.txt",
            "content": "/etc/passwd is not a path here",
            "edits": [{"filePath": "~/.ssh/config"}, {"new_path": "~"}],
            "note": "file:///etc/shadow",
            "target_dir": "file://localhost/var/x%20y",
            "paths": ["b", "c"],
            "count": 3,
        });
        let mut found = named_paths(&args, Some(home));
        found.sort();
        assert_eq!(
            found,
            vec![
                "/etc/shadow",
                "/home/u",
                "/home/u/.ssh/config",
                "/var/x y",
                "a.txt",
                "b",
                "c"
            ]
        );
    }

    #[test]
    fn names_are_compared_without_case_or_separators() {
        for key in [
            "PATH",
            "file_name",
            "outputDir",
            "Destination",
            "old-path",
            "uri",
        ] {
            assert!(is_path_key(key), "{key}");
        }
        for key in ["text", "content", "name", "message", "query"] {
            assert!(!is_path_key(key), "{key}");
        }
    }
}
