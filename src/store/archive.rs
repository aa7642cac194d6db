//! A run folder packed as an archive (`tar czf run.tar.gz .cn-run/RUN`, what a CI job
//! keeps), unpacked for `--resume RUN.tar.gz`. Entries are unpacked beneath the new
//! folder only (the `tar` crate refuses `..`, absolute paths and writes through links).

use std::path::{Path, PathBuf};

use super::StoreError;

/// Whether `path` names an archive `--resume` unpacks.
pub fn is_archive(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    path.is_file()
        && [".tar", ".tar.gz", ".tgz"]
            .iter()
            .any(|e| name.ends_with(e))
}

/// Unpack `archive` into `dest` (made now; it must not exist) and return the run folder
/// inside it: `dest` itself or the one folder below it holding a session.
pub fn unpack(archive: &Path, dest: &Path) -> Result<PathBuf, StoreError> {
    let fail = |why: String| StoreError::Archive {
        path: archive.to_path_buf(),
        why,
    };
    let file = std::fs::File::open(archive).map_err(|e| fail(e.to_string()))?;
    let name = archive.to_string_lossy().to_ascii_lowercase();
    let reader: Box<dyn std::io::Read> = if name.ends_with(".tar") {
        Box::new(file)
    } else {
        Box::new(flate2::read::GzDecoder::new(file))
    };
    std::fs::create_dir_all(dest.parent().unwrap_or(Path::new(".")))
        .map_err(|e| fail(e.to_string()))?;
    std::fs::create_dir(dest).map_err(|e| fail(format!("{}: {e}", dest.display())))?;
    let mut tar = tar::Archive::new(reader);
    tar.set_preserve_permissions(false);
    tar.set_overwrite(false);
    tar.unpack(dest).map_err(|e| fail(e.to_string()))?;
    find_run(dest).ok_or_else(|| fail("it holds no run folder (no session.jsonl)".to_owned()))
}

/// The folder at most three levels down that holds a session.
fn find_run(dir: &Path) -> Option<PathBuf> {
    let mut level = vec![dir.to_path_buf()];
    for _ in 0..4 {
        if let Some(found) = level
            .iter()
            .find(|d| d.join(crate::session::SESSION_FILE).is_file())
        {
            return Some(found.clone());
        }
        level = level
            .iter()
            .filter_map(|d| std::fs::read_dir(d).ok())
            .flat_map(|e| e.filter_map(Result::ok))
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_run_folder_unpacks_and_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("src/.cn-run/r1");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("session.jsonl"), "{}\n").unwrap();
        let archive = dir.path().join("run.tar.gz");
        let status = std::process::Command::new("tar")
            .args(["czf"])
            .arg(&archive)
            .arg("-C")
            .arg(dir.path().join("src"))
            .arg(".cn-run")
            .status()
            .unwrap();
        assert!(status.success());
        assert!(is_archive(&archive));
        let found = unpack(&archive, &dir.path().join("out")).unwrap();
        assert_eq!(found, dir.path().join("out/.cn-run/r1"));
    }
}
