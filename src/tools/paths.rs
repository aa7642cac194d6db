//! Paths the model names, resolved against the workspace: where they really point (symlinks
//! followed), whether that is inside the workspace, and whether the file looks sensitive.

use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A path argument after resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute, lexically normalised (no `.`/`..`), symlinks not followed.
    pub lexical: PathBuf,
    /// Symlinks followed for the longest existing prefix; the rest appended.
    pub real: PathBuf,
    /// Whether `real` lies inside the (canonical) workspace.
    pub inside: bool,
}

/// Resolve `raw` (relative to `workspace`, or absolute) the way the filesystem will.
pub fn resolve_in_workspace(workspace: &Path, raw: &str) -> ResolvedPath {
    let raw = raw.strip_prefix("./").unwrap_or(raw);
    let joined = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        workspace.join(raw)
    };
    let lexical = normalize(&joined);
    let real = real_path(&lexical);
    let inside = real.starts_with(workspace);
    ResolvedPath {
        lexical,
        real,
        inside,
    }
}

/// Remove `.` and resolve `..` without touching the filesystem.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Follow symlinks for the longest prefix of `path` that exists, and dangling ones too (a
/// write through `link -> /elsewhere/new` creates `/elsewhere/new`).
fn real_path(path: &Path) -> PathBuf {
    real_path_hops(path, 0)
}

/// Symlinks followed before giving up (the kernel's own limit is 40).
const MAX_HOPS: u8 = 40;

fn real_path_hops(path: &Path, hops: u8) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    if hops < MAX_HOPS
        && let Ok(target) = std::fs::read_link(path)
    {
        let base = path.parent().unwrap_or(Path::new("/"));
        return real_path_hops(&normalize(&base.join(target)), hops + 1);
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => real_path_hops(parent, hops).join(name),
        _ => path.to_path_buf(),
    }
}

/// Credential files an agent must not read or write without an explicit rule.
const SENSITIVE: &[&str] = &[
    "**/.env",
    "**/.env.*",
    "**/*.env",
    "**/*.pem",
    "**/*.key",
    "**/*.p12",
    "**/*.pfx",
    "**/*.keystore",
    "**/id_rsa*",
    "**/id_dsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
    "**/.ssh/**",
    "**/.aws/**",
    "**/.azure/**",
    "**/.config/gcloud/**",
    "**/.kube/config",
    "**/.docker/config.json",
    "**/.netrc",
    "**/.pgpass",
    "**/.npmrc",
    "**/.pypirc",
    "**/.git-credentials",
    "**/credentials.json",
    "**/*credentials*.json",
    "**/secrets/**",
    "**/*.token",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
];

static SENSITIVE_SET: LazyLock<GlobSet> = LazyLock::new(|| {
    let mut builder = GlobSetBuilder::new();
    for pattern in SENSITIVE {
        if let Ok(glob) = GlobBuilder::new(pattern).literal_separator(true).build() {
            builder.add(glob);
        }
    }
    builder.build().unwrap_or_else(|_| GlobSet::empty())
});

/// Whether `path` (absolute) looks like a credential file. `.env.example` and
/// `.env.sample` are templates and not sensitive.
pub fn is_sensitive_path(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".example") || name.ends_with(".sample") || name.ends_with(".template") {
        return false;
    }
    SENSITIVE_SET.is_match(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_and_dot_paths() {
        let ws = std::env::temp_dir().canonicalize().unwrap();
        let r = resolve_in_workspace(&ws, "./a/../b.txt");
        assert_eq!(r.lexical, ws.join("b.txt"));
        assert!(r.inside);
        let out = resolve_in_workspace(&ws, "../../etc/passwd");
        assert!(!out.inside);
    }

    #[test]
    fn symlink_out_of_the_workspace_is_outside() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let outside = dir.path().canonicalize().unwrap().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
        let r = resolve_in_workspace(&ws, "link/new.txt");
        assert!(!r.inside, "{r:?}");
        assert_eq!(r.real, outside.join("new.txt"));
    }

    #[test]
    fn a_dangling_symlink_resolves_to_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::os::unix::fs::symlink(base.join("gone/f.txt"), ws.join("link")).unwrap();
        let r = resolve_in_workspace(&ws, "link");
        assert_eq!(r.real, base.join("gone/f.txt"));
        assert!(!r.inside);
    }

    #[test]
    fn sensitive_files() {
        for p in [
            "/w/.env",
            "/w/app/.env.production",
            "/home/u/.ssh/id_rsa",
            "/w/certs/server.pem",
            "/home/u/.aws/credentials",
            "/etc/shadow",
        ] {
            assert!(is_sensitive_path(Path::new(p)), "{p}");
        }
        for p in [
            "/w/src/main.rs",
            "/w/.env.example",
            "/w/config.yaml",
            "/w/keys.rs",
        ] {
            assert!(!is_sensitive_path(Path::new(p)), "{p}");
        }
    }
}
