//! The job's `artifacts:`: files (paths or globs, workspace-relative) copied into the
//! run's `artifacts/` folder after the run and its checks, hashed, with size limits and a
//! clear note for what is missing or too big.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSetBuilder};
use sha2::{Digest, Sha256};

use crate::tools::ArtifactRecord;

/// Largest single file copied.
pub const MAX_FILE_BYTES: u64 = 100 * 1024 * 1024;
/// Largest total copied per run.
pub const MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;

/// Copy the files matching `patterns` from `workspace` to `dest`. Returns what was copied
/// and a warning for each pattern that matched nothing and each file that was too big.
/// `skip` lists folders never collected (the run's own output folder, `.git`).
pub fn collect(
    patterns: &[String],
    workspace: &Path,
    dest: &Path,
    skip: &[PathBuf],
) -> (Vec<ArtifactRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    if patterns.is_empty() {
        return (records, warnings);
    }
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
    let Ok(set) = builder.build() else {
        return (records, warnings);
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
        let Ok(rel) = path.strip_prefix(workspace) else {
            continue;
        };
        let hits = set.matches(rel);
        if hits.is_empty() {
            continue;
        }
        for i in hits {
            matched[i] = true;
        }
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        if size > MAX_FILE_BYTES || total + size > MAX_TOTAL_BYTES {
            warnings.push(format!(
                "artifact {} not collected: {size} bytes is over the limit",
                rel.display()
            ));
            continue;
        }
        match copy_hashed(path, &dest.join(rel)) {
            Ok(sha256) => {
                total += size;
                records.push(ArtifactRecord {
                    path: rel.display().to_string(),
                    stored: dest.join(rel),
                    size,
                    sha256,
                    kind: "file".to_owned(),
                });
            }
            Err(e) => warnings.push(format!("artifact {} not collected: {e}", rel.display())),
        }
    }
    for (p, hit) in patterns.iter().zip(matched) {
        if !hit {
            warnings.push(format!("artifact pattern `{p}` matched no file"));
        }
    }
    (records, warnings)
}

fn copy_hashed(from: &Path, to: &Path) -> std::io::Result<String> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut input = std::fs::File::open(from)?;
    let mut output = std::fs::File::create(to)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        output.write_all(&buf[..n])?;
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
        let (records, warnings) = collect(
            &patterns,
            ws.path(),
            dest.path(),
            &[ws.path().join(".cn-run")],
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
}
