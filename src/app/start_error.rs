//! Why a run could not start, and which exit code that is: a wrong job or command line is
//! exit 2; a run folder that cannot be made or written (a read-only mount, a folder owned by
//! another user) is an environment error, exit 6, said in words with what to do.

use std::path::Path;

use crate::exit_code::Status;

/// A run that could not start: the message printed, and the status it counts as.
#[derive(Debug, Clone)]
pub(crate) struct StartError {
    pub message: String,
    pub status: Status,
}

impl From<String> for StartError {
    fn from(message: String) -> Self {
        StartError {
            message,
            status: Status::Invalid,
        }
    }
}

impl From<&str> for StartError {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

impl StartError {
    /// The run folder `dir` cannot be made or written.
    pub(crate) fn run_folder(dir: &Path, e: &std::io::Error) -> Self {
        let mut message = format!(
            "cannot write the run folder {}: {e}. cn-run writes result.json, events.jsonl and \
             the session there",
            dir.display()
        );
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            let uid = rustix::process::getuid().as_raw();
            message.push_str(&format!(
                "; this user (uid {uid}) may not write it. In Docker on a mounted checkout, run \
                 as the checkout's owner (docker run --user \"$(id -u):$(id -g)\" …) or give \
                 --out a writable folder"
            ));
        } else {
            message.push_str("; give --out a folder that can be created");
        }
        StartError {
            message,
            status: Status::InternalError,
        }
    }
}
