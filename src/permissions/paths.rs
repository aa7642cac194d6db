//! Path normalisation against the workspace root, so `./src/a.rs`, `src/x/../a.rs` and
//! `/ws/src/a.rs` all meet a rule as `src/a.rs`.
//!
//! `.` segments are dropped, `..` is resolved, a path inside the workspace becomes relative to
//! it (the root itself is `.`), and a path outside stays absolute. Rule patterns go through the
//! same function (textually), so a relative pattern only ever describes paths inside the
//! workspace. A call's path is matched as it really is: symlinks of the target and of every
//! parent are followed first ([`Workspace::real`]), so `src/link -> /elsewhere` meets a rule as
//! `/elsewhere`, which `Write(src/**)` does not name.

/// The workspace root, as normalised path segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Workspace {
    root: Vec<String>,
    /// The root as given, for resolving symlinks on disk.
    dir: std::path::PathBuf,
}

impl Workspace {
    /// A workspace rooted at `root` (taken as absolute; its own symlinks resolved if it exists).
    pub(crate) fn new(root: &std::path::Path) -> Self {
        let dir = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let text = dir.to_string_lossy();
        Self {
            root: resolve(&[], &text),
            dir,
        }
    }

    /// A call's path as it really is, normalised: symlinks of the target and every existing
    /// parent followed.
    pub(crate) fn real(&self, path: &str) -> String {
        let resolved = crate::tools::paths::resolve_in_workspace(&self.dir, path);
        self.normalize(&resolved.real.to_string_lossy())
    }

    /// `path` relative to the workspace if it lies inside it, otherwise absolute; `.` for the
    /// root itself.
    pub(crate) fn normalize(&self, path: &str) -> String {
        let base: &[String] = if path.starts_with('/') {
            &[]
        } else {
            &self.root
        };
        let segments = resolve(base, path);
        match segments.strip_prefix(self.root.as_slice()) {
            Some([]) => ".".to_owned(),
            Some(rest) => rest.join("/"),
            None => format!("/{}", segments.join("/")),
        }
    }
}

/// Appends `path`'s segments to `base`, dropping `.` and empty segments and letting `..` remove
/// the previous segment (never climbing above `/`).
fn resolve(base: &[String], path: &str) -> Vec<String> {
    let mut out = base.to_vec();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            other => out.push(other.to_owned()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> Workspace {
        Workspace::new(std::path::Path::new("/home/ci/ws"))
    }

    #[test]
    fn paths_inside_the_workspace_become_relative() {
        assert_eq!(ws().normalize("./src/a.rs"), "src/a.rs");
        assert_eq!(ws().normalize("src//x/../a.rs"), "src/a.rs");
        assert_eq!(ws().normalize("/home/ci/ws/src/a.rs"), "src/a.rs");
        assert_eq!(ws().normalize("/home/ci/ws"), ".");
        assert_eq!(ws().normalize(""), ".");
    }

    #[test]
    fn paths_outside_stay_absolute() {
        assert_eq!(ws().normalize("../other/a.rs"), "/home/ci/other/a.rs");
        assert_eq!(ws().normalize("/etc/passwd"), "/etc/passwd");
        assert_eq!(ws().normalize("/home/ci/wsx/a"), "/home/ci/wsx/a");
        assert_eq!(ws().normalize("/../../etc"), "/etc");
    }

    #[test]
    fn the_filesystem_root_as_workspace_makes_every_path_relative() {
        let root = Workspace::new(std::path::Path::new("/"));
        assert_eq!(root.normalize("/src/a.rs"), "src/a.rs");
        assert_eq!(root.normalize("/"), ".");
    }
}
