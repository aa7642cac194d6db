//! The start-up probe's evidence: what a contained command gets, read from inside by the
//! per-call supervisor (`cn-run-call --report`) after it set everything up exactly as for a
//! command, and checked against the policy by cn-run. Only what this reading shows is
//! listed as enforced in result.json: capabilities and `no_new_privs` from
//! `/proc/self/status`, a Unix socket actually refused, the mounts from
//! `/proc/self/mountinfo`, the namespaces, the resource limits and the cgroup.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Protection, SandboxMode, SandboxPolicy};

/// What the supervisor saw of itself inside the sandbox.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Report {
    /// The lines of `/proc/self/status` that matter (`CapEff:` …).
    pub status: Vec<String>,
    /// `socket(AF_UNIX)` was refused.
    pub unix_socket_refused: bool,
    pub mountinfo: String,
    /// The network devices in view.
    pub net_devices: Vec<String>,
    /// `/proc/self/ns/pid` and `/proc/self/ns/net`.
    pub pid_ns: String,
    pub net_ns: String,
    /// (name, soft limit) of `fsize`, `data`, `nproc`; `None`: unlimited.
    pub rlimits: Vec<(String, Option<u64>)>,
    pub cgroup: String,
    /// `kernel.pid_max` as the command's PID namespace has it.
    #[serde(default)]
    pub pid_max: Option<u64>,
}

/// Read the report (inside, in the supervisor).
pub(crate) fn collect() -> Report {
    use rustix::process::{Resource, getrlimit};
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let keys = [
        "CapEff:",
        "CapPrm:",
        "CapBnd:",
        "NoNewPrivs:",
        "Seccomp:",
        "Groups:",
    ];
    let status = read("/proc/self/status")
        .lines()
        .filter(|l| keys.iter().any(|k| l.starts_with(k)))
        .map(str::to_owned)
        .collect();
    let refused = std::os::unix::net::UnixDatagram::unbound()
        .err()
        .is_some_and(|e| e.raw_os_error() == Some(libc::EPERM));
    let net_devices = read("/proc/self/net/dev")
        .lines()
        .skip(2)
        .filter_map(|l| Some(l.split(':').next()?.trim().to_owned()))
        .collect();
    let link = |p: &str| {
        std::fs::read_link(p)
            .map(|l| l.display().to_string())
            .unwrap_or_default()
    };
    let rlimits = [
        ("fsize", Resource::Fsize),
        ("data", Resource::Data),
        ("nproc", Resource::Nproc),
    ]
    .into_iter()
    .map(|(n, r)| (n.to_owned(), getrlimit(r).current))
    // The stack's soft limit stays small (thread stacks are sized by it): the hard one binds.
    .chain([("stack".to_owned(), getrlimit(Resource::Stack).maximum)])
    .collect();
    Report {
        status,
        unix_socket_refused: refused,
        mountinfo: read("/proc/self/mountinfo"),
        net_devices,
        pid_ns: link("/proc/self/ns/pid"),
        net_ns: link("/proc/self/ns/net"),
        rlimits,
        cgroup: read("/proc/self/cgroup"),
        pid_max: super::pid_bound::seen_inside(),
    }
}

/// One mount as `/proc/self/mountinfo` says it.
struct Mount<'a> {
    point: &'a str,
    read_only: bool,
    fstype: &'a str,
    options: &'a str,
}

fn mounts(info: &str) -> Vec<Mount<'_>> {
    info.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            Some(Mount {
                point: f.get(4)?,
                read_only: f.get(5)?.split(',').any(|o| o == "ro"),
                fstype: r.first()?,
                options: r.get(2).copied().unwrap_or(""),
            })
        })
        .collect()
}

impl Report {
    fn status_value(&self, key: &str) -> Option<&str> {
        self.status
            .iter()
            .find_map(|l| l.strip_prefix(key))
            .map(str::trim)
    }

    /// The last mount at `path` (the one in view).
    fn mount_at(&self, path: &Path) -> Option<Mount<'_>> {
        let p = path.to_str()?;
        mounts(&self.mountinfo).into_iter().rfind(|m| m.point == p)
    }

    fn read_only_at(&self, path: &Path) -> bool {
        self.mount_at(path).is_some_and(|m| m.read_only)
    }

    /// Whether `protection` is shown in force for `policy`; `Err` says why not.
    pub(crate) fn check(&self, p: Protection, policy: &SandboxPolicy) -> Result<(), String> {
        let ok = |b: bool, why: &str| if b { Ok(()) } else { Err(why.to_owned()) };
        match p {
            Protection::ReadOnlyOutsideWorkspace => {
                let ws_ok = policy.mode != SandboxMode::WorkspaceWrite
                    || policy
                        .writable
                        .iter()
                        .filter(|w| w.exists())
                        .all(|w| self.mount_at(w).is_some_and(|m| !m.read_only));
                ok(
                    self.read_only_at(Path::new("/"))
                        && self.read_only_at(Path::new("/proc/sys"))
                        && ws_ok,
                    "/ or /proc/sys is not read-only",
                )
            }
            Protection::PrivateTmp => ok(
                ["/tmp", "/var/tmp", "/dev/shm"].iter().all(|t| {
                    self.mount_at(Path::new(t))
                        .is_some_and(|m| m.fstype == "tmpfs")
                }),
                "the temporary folders are not the run's own",
            ),
            Protection::HiddenCredentials => ok(
                policy.hidden.iter().all(|h| self.mount_at(h).is_some()),
                "a credential location is not covered",
            ),
            Protection::PidNamespace => ok(
                !self.pid_ns.is_empty() && self.pid_ns != own("/proc/self/ns/pid"),
                "commands share cn-run's PID namespace",
            ),
            Protection::NoNetwork => ok(
                self.net_ns != own("/proc/self/ns/net")
                    && self.net_devices.iter().all(|d| d == "lo"),
                "commands see a network device besides loopback",
            ),
            Protection::EnvAllowList => ok(policy.mode != SandboxMode::Off, "sandbox off"),
            Protection::NoCapabilities => ok(
                self.status_value("CapEff:") == Some("0000000000000000")
                    && self.status_value("CapPrm:") == Some("0000000000000000")
                    && self.status_value("NoNewPrivs:") == Some("1"),
                "commands hold capabilities or may gain them",
            ),
            Protection::NoHostSockets => ok(
                self.unix_socket_refused,
                "commands can make Unix sockets (and reach the host's)",
            ),
            Protection::ReadOnlyGit => ok(
                policy.git_read_only.iter().all(|g| self.read_only_at(g)),
                "a git folder is writable",
            ),
            Protection::ReadOnlyRunFolder => ok(
                policy.records.iter().all(|r| self.read_only_at(r)),
                "the run's folder is writable",
            ),
            Protection::BoundedResources => self.check_limits(policy),
        }
    }

    /// The limits: each bound by the cgroup or a resource limit, and the temporary folders
    /// sized.
    fn check_limits(&self, policy: &SandboxPolicy) -> Result<(), String> {
        let limits = &policy.limits;
        let rlimit = |name: &str| {
            self.rlimits
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| *v)
        };
        let in_cgroup = policy
            .cgroup
            .as_ref()
            .is_some_and(|c| c.names().iter().all(|n| self.cgroup.contains(n.as_str())));
        let (data, stack) = super::limits::data_and_stack(limits.memory_bytes);
        let memory = in_cgroup || (rlimit("data") == Some(data) && rlimit("stack") == Some(stack));
        // The kernel never applies RLIMIT_NPROC to uid 0: root needs the cgroup or the
        // run's PID namespace bounded.
        let root = rustix::process::geteuid().is_root();
        let processes = in_cgroup
            || (!root && rlimit("nproc") == Some(limits.processes))
            || (root
                && (super::pid_bound::binds(policy) || super::pid_bound::per_command(policy))
                && self.pid_max == Some(super::pid_bound::pid_max_for(limits.processes)));
        let files = rlimit("fsize") == Some(limits.file_size_bytes);
        let size = format!("size={}k", limits.tmp_bytes / 1024);
        let tmp = self
            .mount_at(Path::new("/tmp"))
            .is_some_and(|m| m.options.split(',').any(|o| o == size));
        match (memory, processes, files, tmp) {
            (true, true, true, true) => Ok(()),
            _ => Err(format!(
                "a limit does not bind (memory {memory}, processes {processes}, file size \
                 {files}, /tmp size {tmp})"
            )),
        }
    }
}

/// cn-run's own namespace link, to compare with the command's.
fn own(link: &str) -> String {
    std::fs::read_link(link)
        .map(|l| l.display().to_string())
        .unwrap_or_else(|_| PathBuf::from("?").display().to_string())
}
