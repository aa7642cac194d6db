//! A run folder is owned by one process at a time, as git's `index.lock` and cargo's
//! package-cache lock keep one writer: `.cn-run.lock` in the folder, held with an
//! exclusive `flock` for as long as the run (or its resume) lasts. The kernel lets go of it
//! when the process ends, however it ends (`kill -9` included), so a dead run never keeps
//! its folder locked. A second run on the same `--out`, or a resume of a run that is still
//! going, is refused in words naming the holder.
//!
//! The lock file also holds the run's space reserve: 1 MiB written when the run starts and
//! given back just before the run writes its last files, so a disk that filled during the
//! run still has room for its result.json and the last lines of its logs.

use std::fs::{File, OpenOptions};
use std::io::Read as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

use super::start_error::RunError;

/// The lock file's name in a run folder.
pub(crate) const LOCK_FILE: &str = ".cn-run.lock";

/// Bytes set aside for the run's last writes.
const RESERVE: usize = 1 << 20;

/// The held lock of a run folder.
#[derive(Debug)]
pub(crate) struct RunLock {
    file: File,
    path: PathBuf,
    /// The length of the holder's line (the reserve follows it).
    head: u64,
}

impl RunLock {
    /// Takes the lock of run folder `dir` for `what` (a line saying who holds it), or says
    /// who holds it now.
    pub(crate) fn take(dir: &Path, what: &str) -> Result<RunLock, RunError> {
        let path = dir.join(LOCK_FILE);
        let folder_error = |e| RunError::run_folder(dir, e);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(folder_error)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(RunError::Busy {
                    dir: dir.to_path_buf(),
                    holder: holder(&file),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(folder_error(e)),
        }
        let line = format!(
            "pid {} ({what}) since {}\n",
            std::process::id(),
            crate::events::now()
        );
        file.set_len(0).map_err(folder_error)?;
        file.write_all_at(line.as_bytes(), 0)
            .map_err(folder_error)?;
        let head = line.len() as u64;
        let lock = RunLock { file, path, head };
        lock.reserve();
        Ok(lock)
    }

    /// Sets the space reserve aside (none when the disk has no room for it).
    fn reserve(&self) {
        let zeros = vec![0u8; RESERVE];
        if self.file.write_all_at(&zeros, self.head).is_err() {
            self.release();
        }
    }

    /// Gives the reserve back, for the run's last writes.
    pub(crate) fn release(&self) {
        let _ = self.file.set_len(self.head);
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        self.release();
    }
}

/// Who holds a lock file, as its first line says.
fn holder(file: &File) -> String {
    let mut head = [0u8; 256];
    let n = (&*file).read(&mut head).unwrap_or(0);
    let text = String::from_utf8_lossy(&head[..n]);
    let line = text.lines().next().unwrap_or("").trim();
    if line.is_empty() {
        "another cn-run process".to_owned()
    } else {
        format!("cn-run {line}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_refused_naming_the_holder_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::take(dir.path(), "run r1").unwrap();
        let size = std::fs::metadata(first.path()).unwrap().len();
        assert!(size > RESERVE as u64, "the reserve is set aside: {size}");
        let refused = RunLock::take(dir.path(), "run r2").unwrap_err();
        let text = refused.to_string();
        assert!(
            text.contains(&format!("pid {} (run r1)", std::process::id())),
            "{text}"
        );
        first.release();
        assert!(std::fs::metadata(dir.path().join(LOCK_FILE)).unwrap().len() < 200);
        drop(first);
        let again = RunLock::take(dir.path(), "run r3").unwrap();
        drop(again);
    }
}
