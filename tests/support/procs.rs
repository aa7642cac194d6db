//! The processes a test started, found through what the test owns (its temp workspace, where
//! every command of its run starts), never by a name across the machine: another test or
//! another user's `sleep 29` is none of its business.

use std::path::{Path, PathBuf};

/// A live process: its pid and its command line (arguments joined by spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub cmdline: String,
}

/// Whether `pid` is running (a zombie is not).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
                != Some('Z')
        }
    }
}

/// Live processes whose working directory is `dir` or below it (a run's commands start in
/// its workspace, sandboxed or not).
pub fn in_dir(dir: &Path) -> Vec<Proc> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd"))
                .is_ok_and(|cwd: PathBuf| cwd.starts_with(&dir))
                && alive(pid)
        })
        .map(|pid| Proc {
            pid,
            cmdline: std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .trim_end()
                        .to_owned()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// Sends SIGKILL to every process still running in `dir` (what a killed run left behind).
pub fn kill_in_dir(dir: &Path) {
    for p in in_dir(dir) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &p.pid.to_string()])
            .status();
    }
}

/// Polls `check` until it holds; false after two minutes. A give-up for a test that would
/// otherwise hang, not a speed check: a loaded machine may take long, the answer is the same.
pub fn wait_for(mut check: impl FnMut() -> bool) -> bool {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::time::Instant::now() < give_up {
        if check() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    check()
}
