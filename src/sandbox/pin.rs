//! The per-call supervisor, pinned when the run starts: its binary is opened once and every
//! sandbox of the run gets that open file bound at [`INSIDE`] (bubblewrap's
//! `--ro-bind-fd`), so what starts each command is the file cn-run found at start, whatever
//! a command later does to the folder it came from (cn-run installed under `/tmp`, which the
//! private `/tmp` covers; or in a folder a `writable:` entry covers). The host path is also
//! bound read-only inside when a writable folder holds it, so no command rewrites the file
//! in place. The supervisor starts without capabilities: the run's thread inside the
//! sandbox dropped them before it starts anything ([`super::entry`]), and a bubblewrap per
//! command runs with `--cap-drop ALL`.

use std::ffi::OsString;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::{Path, PathBuf};

use super::entry::{CALL_BINARY, CALL_SUBCOMMAND};
use super::error::{SandboxError, os};

/// Where the supervisor appears inside every sandbox (on bubblewrap's own `/dev`).
pub(crate) const INSIDE: &str = "/dev/cn-run-call";

/// The opened supervisor binary.
#[derive(Debug)]
pub struct Pinned {
    /// Open for the run: each bubblewrap binds it. Children inherit it (read-only; while
    /// the run's sandbox or a command's supervisor executes the file, no one can open it
    /// for writing: ETXTBSY).
    file: Option<File>,
    /// The file's path on the host when it was opened.
    pub(crate) host_path: PathBuf,
    /// `["__sandbox-call"]` when the supervisor is cn-run itself.
    first_args: Vec<OsString>,
}

impl Pinned {
    /// Open `cn-run-call` beside `cn_run`, else `cn_run` itself (its hidden subcommand).
    /// `cn_run` is read now: inside the sandbox `/proc/self/exe` would name another binary.
    pub(crate) fn open(cn_run: &Path) -> Result<Pinned, SandboxError> {
        let me = std::fs::canonicalize(cn_run)
            .map_err(os(format!("cannot find cn-run at {}", cn_run.display())))?;
        let small = me.with_file_name(CALL_BINARY);
        let (host_path, first_args) = if small.is_file() {
            (small, Vec::new())
        } else {
            (me, vec![OsString::from(CALL_SUBCOMMAND)])
        };
        let file =
            File::open(&host_path).map_err(os(format!("cannot open {}", host_path.display())))?;
        inheritable(file.as_fd())?;
        Ok(Pinned {
            file: Some(file),
            host_path,
            first_args,
        })
    }

    /// bubblewrap's arguments that bind the pinned file at [`INSIDE`].
    pub(crate) fn bind_args(&self) -> Vec<OsString> {
        self.file
            .iter()
            .flat_map(|f| {
                [
                    "--ro-bind-fd".into(),
                    f.as_raw_fd().to_string().into(),
                    INSIDE.into(),
                ]
            })
            .collect()
    }

    /// The supervisor's program and first arguments, as seen inside.
    pub(crate) fn command(&self) -> Vec<OsString> {
        let mut v = vec![OsString::from(INSIDE)];
        v.extend(self.first_args.iter().cloned());
        v
    }

    /// The supervisor's program and first arguments outside any sandbox: the pinned file
    /// through its descriptor (`/proc/self/fd/N`, which the child inherits).
    pub(crate) fn host_command(&self) -> Option<Vec<OsString>> {
        let fd = self.file.as_ref()?.as_raw_fd();
        let mut v = vec![OsString::from(format!("/proc/self/fd/{fd}"))];
        v.extend(self.first_args.iter().cloned());
        Some(v)
    }
}

/// Let children inherit `fd` (bubblewrap reads it; the supervisor closes every inherited
/// descriptor before it starts the command).
pub(crate) fn inheritable(fd: BorrowedFd<'_>) -> Result<(), SandboxError> {
    rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())
        .map_err(os("cannot make a descriptor inheritable"))
}
