//! Why part of the sandbox could not be set up, typed by what failed. None of these stops a
//! run by itself: the set-up falls back (a bubblewrap per command, the Landlock launcher) and
//! says why in the run's notes; only `require_sandbox` turns missing containment into an
//! environment failure of the run (`setup::SandboxRefused`: an internal error, exit 6).

/// A step of the sandbox's set-up that failed.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A program of the set-up (bubblewrap) could not be started.
    #[error("cannot start {program}: {source}")]
    Start {
        program: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A step the operating system refused or failed: `step` says which (joining a
    /// namespace, binding a socket, reading bubblewrap's pipe).
    #[error("{step}: {source}")]
    Os {
        step: String,
        #[source]
        source: std::io::Error,
    },
    /// bubblewrap answered something other than what the set-up waits for.
    #[error("bubblewrap {0}")]
    Bubblewrap(String),
    /// The namespace thread ended before it said whether its set-up worked.
    #[error("the thread {0} ended")]
    ThreadEnded(String),
    /// Landlock refused a ruleset (`what`: filesystem or network).
    #[error("cannot apply the Landlock {what} rules: {source}")]
    Landlock {
        what: &'static str,
        #[source]
        source: ::landlock::RulesetError,
    },
    /// Neither a network namespace nor one inside a new user namespace could be made.
    #[error(
        "cannot create a network namespace ({direct}), nor one inside a new user namespace \
         ({user}); user namespaces may be disabled for unprivileged users or by the container"
    )]
    NoNetworkNamespace {
        direct: std::io::Error,
        user: std::io::Error,
    },
    /// The socket filter could not be built or put on the thread.
    #[error("cannot apply the seccomp filter: {0}")]
    Seccomp(String),
    /// The run's cgroup could not be made (an ordinary user, or no writable hierarchy).
    #[error("no cgroup for the run: {0}")]
    Cgroup(String),
    /// The proxy needs a private folder for its socket and the run has none.
    #[error("the run has no private folder for the proxy's socket")]
    NoPrivateFolder,
    /// The run ended before its first command: the set-up stopped.
    #[error("not needed: the run started no command")]
    NotNeeded,
    /// `true`, started as a command of the run would be, did not succeed.
    #[error("{stderr} ({status})")]
    TrueFailed {
        stderr: String,
        status: std::process::ExitStatus,
    },
}

/// Shorthand: an OS error of the set-up step `step`.
pub(crate) fn os<E: Into<std::io::Error>>(
    step: impl Into<String>,
) -> impl FnOnce(E) -> SandboxError {
    let step = step.into();
    move |e| SandboxError::Os {
        step,
        source: e.into(),
    }
}
