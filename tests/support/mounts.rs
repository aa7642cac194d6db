//! File systems a fault test needs: a small tmpfs (to fill), a read-only bind mount. Only
//! root can mount; elsewhere (or where the kernel refuses) the test is skipped, and says
//! so. Every mount is unmounted when its guard is dropped — on success, on a failed
//! assertion (unwinding), always.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A mount that goes when dropped.
pub struct Mount {
    path: PathBuf,
}

fn mount(args: &[&str], path: &Path) -> bool {
    Command::new("mount")
        .args(args)
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this process may mount (root); says why not when it may not.
pub fn can_mount(test: &str) -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        eprintln!("{test}: skipped, mounting a file system needs root");
    }
    root
}

impl Mount {
    /// A tmpfs of `size` (`mount -o size=…`, e.g. `1500k`) on `path` (made if missing).
    pub fn tmpfs(path: &Path, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(path).unwrap();
        let opts = format!("size={size}");
        if !mount(&["-t", "tmpfs", "-o", &opts, "tmpfs"], path) {
            eprintln!("skipped: cannot mount a tmpfs on {}", path.display());
            return None;
        }
        Some(Mount {
            path: path.to_path_buf(),
        })
    }

    /// `path` bound onto itself read-only (what is written there from now on fails).
    pub fn read_only(path: &Path) -> Option<Mount> {
        if !mount(&["--bind", &path.display().to_string()], path) {
            eprintln!("skipped: cannot bind-mount {}", path.display());
            return None;
        }
        let guard = Mount {
            path: path.to_path_buf(),
        };
        if !mount(&["-o", "remount,bind,ro"], path) {
            eprintln!("skipped: cannot remount {} read-only", path.display());
            return None;
        }
        Some(guard)
    }

    /// Fills the file system but for about `room` bytes; returns the filler file (remove
    /// it to free the space again).
    pub fn fill(&self, room: u64) -> PathBuf {
        let filler = self.path.join(".filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![b'f'; 64 * 1024];
        while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
        let mut small = vec![b'f'; 4096];
        while std::io::Write::write_all(&mut f, &small).is_ok() {}
        small.truncate(1);
        while std::io::Write::write_all(&mut f, &small).is_ok() {}
        let len = f.metadata().unwrap().len();
        f.set_len(len.saturating_sub(room)).unwrap();
        filler
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}
