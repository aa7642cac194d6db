//! The job's `artifacts:`: files (paths or globs, workspace-relative) copied into the
//! run's `artifacts/` folder after the run and its checks, hashed, with size limits and a
//! clear note for what is missing or too big. A file that cannot be read is a warning; a
//! copy that cannot be written (the run folder full or read-only) is a failure of the
//! run's own files, kept apart for the run to report; a stop (a signal) ends the copying
//! between two blocks, leaving no half copy.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSetBuilder};
use sha2::{Digest, Sha256};

use crate::tools::ArtifactRecord;

/// Largest single file copied.
pub const MAX_FILE_BYTES: u64 = 100 * 1024 * 1024;
/// Largest total copied per run.
pub const MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;

/// What collecting the artifacts gave.
#[derive(Debug, Default)]
pub struct Collected {
    pub records: Vec<ArtifactRecord>,
    /// A pattern that matched nothing, a file too big or unreadable.
    pub warnings: Vec<String>,
    /// Copies that could not be written into the run folder: (the copy, why).
    pub failed: Vec<(PathBuf, std::io::Error)>,
    /// The copying was stopped before every file was copied.
    pub interrupted: bool,
}

/// Why one copy did not happen.
enum CopyError {
    Read(std::io::Error),
    Write(std::io::Error),
    Stopped,
}

/// Copy the files matching `patterns` from `workspace` to `dest`. Returns what was copied
/// and a warning for each pattern that matched nothing and each file that was too big.
/// `skip` lists folders never collected (the run's own output folder, `.git`); `stopped`
/// is asked between blocks whether to give up (a signal).
pub fn collect(
    patterns: &[String],
    workspace: &Path,
    dest: &Path,
    skip: &[PathBuf],
    stopped: &dyn Fn() -> bool,
) -> Collected {
    let mut out = Collected::default();
    if patterns.is_empty() {
        return out;
    }
    let Some(set) = glob_set(patterns, &mut out.warnings) else {
        return out;
    };
    let mut matched = vec![false; patterns.len()];
    let mut total = 0u64;
    // Artifacts are often build outputs that .gitignore hides, so ignore files do not apply.
    let walker = ignore::WalkBuilder::new(workspace)
        .standard_filters(false)
        .build();
    for entry in walker.filter_map(Result::ok) {
        let path = entry.path();
        if skip.iter().any(|s| path.starts_with(s))
            || !entry.file_type().is_some_and(|t| t.is_file())
        {
            continue;
        }
        let hits = path
            .strip_prefix(workspace)
            .map(|rel| (rel, set.matches(rel)));
        let Some((rel, hits)) = hits.ok().filter(|(_, h)| !h.is_empty()) else {
            continue;
        };
        hits.into_iter().for_each(|i| matched[i] = true);
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        if size > MAX_FILE_BYTES || total + size > MAX_TOTAL_BYTES {
            out.warnings.push(format!(
                "artifact {} not collected: {size} bytes is over the limit",
                rel.display()
            ));
            continue;
        }
        let before = out.records.len();
        if !out.copy(path, rel, dest, size, stopped) {
            return out;
        }
        if out.records.len() > before {
            total += size;
        }
    }
    for (p, hit) in patterns.iter().zip(matched) {
        if !hit {
            out.warnings
                .push(format!("artifact pattern `{p}` matched no file"));
        }
    }
    out
}

/// The patterns as one set (a pattern that is not a glob is a warning).
fn glob_set(patterns: &[String], warnings: &mut Vec<String>) -> Option<globset::GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        match GlobBuilder::new(p.trim_start_matches("./"))
            .literal_separator(true)
            .build()
        {
            Ok(g) => {
                builder.add(g);
            }
            Err(e) => warnings.push(format!("artifact pattern `{p}` is not a valid glob: {e}")),
        }
    }
    builder.build().ok()
}

impl Collected {
    /// Copies one artifact and notes how it went; false when the copying was stopped.
    fn copy(
        &mut self,
        path: &Path,
        rel: &Path,
        dest: &Path,
        size: u64,
        stopped: &dyn Fn() -> bool,
    ) -> bool {
        let to = dest.join(rel);
        match copy_hashed(path, &to, stopped) {
            Ok(sha256) => self.records.push(ArtifactRecord {
                path: rel.display().to_string(),
                stored: to,
                size,
                sha256,
                kind: "file".to_owned(),
            }),
            Err(CopyError::Read(e)) => self
                .warnings
                .push(format!("artifact {} not collected: {e}", rel.display())),
            Err(CopyError::Write(e)) => self.failed.push((to, e)),
            Err(CopyError::Stopped) => {
                self.interrupted = true;
                return false;
            }
        }
        true
    }
}

/// Copies `from` to `to` and gives its SHA-256; written whole (`out_file::WholeFile`), so
/// a copy not made whole leaves nothing at `to`.
fn copy_hashed(from: &Path, to: &Path, stopped: &dyn Fn() -> bool) -> Result<String, CopyError> {
    let mut input = std::fs::File::open(from).map_err(CopyError::Read)?;
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(CopyError::Write)?;
    }
    let mut output = crate::out_file::WholeFile::create(to).map_err(CopyError::Write)?;
    let sha256 = copy_blocks(&mut input, output.file_mut(), stopped)?;
    output.commit().map_err(CopyError::Write)?;
    Ok(sha256)
}

fn copy_blocks(
    input: &mut std::fs::File,
    output: &mut std::fs::File,
    stopped: &dyn Fn() -> bool,
) -> Result<String, CopyError> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if stopped() {
            return Err(CopyError::Stopped);
        }
        let n = input.read(&mut buf).map_err(CopyError::Read)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        output.write_all(&buf[..n]).map_err(CopyError::Write)?;
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_globs_notes_missing_and_skips_output_folder() {
        let ws = tempfile::tempdir().unwrap();
        let dest = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("target/reports")).unwrap();
        std::fs::write(ws.path().join("target/reports/a.xml"), "<a/>").unwrap();
        std::fs::write(ws.path().join("target/reports/b.xml"), "<b/>").unwrap();
        std::fs::write(ws.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(ws.path().join(".cn-run/x")).unwrap();
        std::fs::write(ws.path().join(".cn-run/x/c.xml"), "<c/>").unwrap();
        let patterns = vec![
            "target/reports/*.xml".to_owned(),
            "missing.txt".to_owned(),
            "**/c.xml".to_owned(),
        ];
        let Collected {
            records, warnings, ..
        } = collect(
            &patterns,
            ws.path(),
            dest.path(),
            &[ws.path().join(".cn-run")],
            &|| false,
        );
        let mut paths: Vec<&str> = records.iter().map(|r| r.path.as_str()).collect();
        paths.sort();
        assert_eq!(paths, ["target/reports/a.xml", "target/reports/b.xml"]);
        assert_eq!(records[0].size, 4);
        assert_eq!(records[0].sha256.len(), 64);
        assert!(dest.path().join("target/reports/a.xml").is_file());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("missing.txt")));
    }

    #[test]
    fn a_stop_between_blocks_leaves_no_half_copy_and_copies_nothing_more() {
        let ws = tempfile::tempdir().unwrap();
        let dest = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.bin"), vec![7u8; 300 * 1024]).unwrap();
        std::fs::write(ws.path().join("b.bin"), b"b").unwrap();
        let asked = std::cell::Cell::new(0);
        // Stopped after the first block of the first file.
        let stopped = || {
            asked.set(asked.get() + 1);
            asked.get() > 1
        };
        let c = collect(&["*.bin".to_owned()], ws.path(), dest.path(), &[], &stopped);
        assert!(c.interrupted && c.records.is_empty() && c.failed.is_empty());
        assert_eq!(
            std::fs::read_dir(dest.path()).unwrap().count(),
            0,
            "no half copy"
        );
        // Control: not stopped, both are copied whole.
        let c = collect(&["*.bin".to_owned()], ws.path(), dest.path(), &[], &|| {
            false
        });
        assert!(!c.interrupted);
        assert_eq!(c.records.len(), 2);
        assert_eq!(
            std::fs::metadata(dest.path().join("a.bin")).unwrap().len(),
            300 * 1024
        );
    }

    #[test]
    fn a_copy_that_cannot_be_written_is_a_failure_not_a_warning() {
        let ws = tempfile::tempdir().unwrap();
        let dest = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("r.txt"), b"r").unwrap();
        // Where the copy must go is a file: the folder cannot be made.
        let blocked = dest.path().join("blocked");
        std::fs::write(&blocked, b"").unwrap();
        let c = collect(&["r.txt".to_owned()], ws.path(), &blocked, &[], &|| false);
        assert!(
            c.records.is_empty() && c.warnings.is_empty(),
            "{:?}",
            c.warnings
        );
        assert_eq!(c.failed.len(), 1);
        assert_eq!(c.failed[0].0, blocked.join("r.txt"));
    }
}
