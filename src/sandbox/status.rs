//! What is really enforced of a run's containment, found out once when the run starts
//! ([`establish`]: bubblewrap is tried with the run's profile; if it cannot run, the fallback
//! launcher reports what it set up), and the record of it for stderr and result.json
//! ([`describe`]): `mechanism`, `enforced: […]`, `missing: […]`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::report::Report;
use super::{ContainedBy, Mechanism, Protection, SandboxError, SandboxMode, SandboxPolicy};

/// How far one part of the fallback launcher's set-up is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    /// Not asked for.
    Off,
    /// Enforced as asked.
    Full,
    /// Partly enforced; `notes` says what is missing.
    Partial,
    /// Asked for but not enforced (the kernel cannot); `notes` says why.
    None,
}

impl Enforcement {
    pub fn as_str(self) -> &'static str {
        match self {
            Enforcement::Off => "off",
            Enforcement::Full => "full",
            Enforcement::Partial => "partial",
            Enforcement::None => "none",
        }
    }
}

/// What the kernel enforces of a policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// The fallback launcher's filesystem part.
    pub filesystem: Enforcement,
    /// The fallback launcher's network part.
    pub network: Enforcement,
    /// The Landlock ABI version in use; `None` when Landlock is unavailable or unused.
    pub landlock_abi: Option<u8>,
    /// How the fallback launcher cut the network off: `netns`, `user+netns`, `landlock-tcp`.
    pub network_method: Option<String>,
    /// Why something is not fully enforced.
    pub notes: Vec<String>,
    /// `bubblewrap`, `landlock` or `none`.
    #[serde(default)]
    pub mechanism: ContainedBy,
    #[serde(default)]
    pub enforced: Vec<Protection>,
    #[serde(default)]
    pub missing: Vec<Protection>,
    /// The job lists hosts, but no proxy could be started: commands reach none of them.
    #[serde(default)]
    pub hosts_unreachable: bool,
    /// The fallback launcher holds no capability and has `no_new_privs` (read back).
    #[serde(default)]
    pub no_capabilities: bool,
    /// The fallback launcher's seccomp filter refuses `socket(AF_UNIX)`.
    #[serde(default)]
    pub no_unix_sockets: bool,
}

impl Probe {
    /// Nothing asked, nothing enforced.
    pub fn off() -> Self {
        Probe {
            filesystem: Enforcement::Off,
            network: Enforcement::Off,
            landlock_abi: None,
            network_method: None,
            notes: Vec::new(),
            mechanism: ContainedBy::None,
            enforced: Vec::new(),
            missing: Vec::new(),
            hosts_unreachable: false,
            no_capabilities: false,
            no_unix_sockets: false,
        }
    }

    /// Not established yet: the run's set-up makes it while the run starts, and its first
    /// command waits for it (`mechanism: pending`; see [`super::Deferred`]).
    pub fn pending() -> Self {
        Probe {
            mechanism: ContainedBy::Pending,
            notes: vec![
                "not set up when this was recorded: it is made while the run starts, and only \
                 the first command waits for it (a run that starts none can end before it is)"
                    .to_owned(),
            ],
            ..Probe::off()
        }
    }

    /// Whether every protection of the default profile the job did not give up is in force
    /// (false under `sandbox: off`).
    pub fn fully_enforced(&self) -> bool {
        self.missing.is_empty() && !self.enforced.is_empty()
    }

    /// Whether the fallback launcher set up all it was asked (its filesystem and network
    /// parts; it never provides the whole profile).
    pub fn launcher_complete(&self) -> bool {
        [self.filesystem, self.network]
            .iter()
            .all(|e| matches!(e, Enforcement::Off | Enforcement::Full))
    }

    /// One sentence for a warning or an error when not everything is enforced.
    pub fn shortfall(&self) -> Option<String> {
        (!self.fully_enforced() || self.hosts_unreachable).then(|| {
            let names = |list: &[Protection]| {
                let v: Vec<&str> = list.iter().map(|p| p.as_str()).collect();
                if v.is_empty() {
                    "none".to_owned()
                } else {
                    v.join(", ")
                }
            };
            let mut s = format!(
                "commands are not fully contained (mechanism: {}; enforced: {}; missing: {})",
                self.mechanism,
                names(&self.enforced),
                names(&self.missing)
            );
            if !self.notes.is_empty() {
                s.push_str(": ");
                s.push_str(&self.notes.join("; "));
            }
            s
        })
    }
}

impl Protection {
    pub fn as_str(self) -> &'static str {
        match self {
            Protection::ReadOnlyOutsideWorkspace => "read-only-outside-workspace",
            Protection::PrivateTmp => "private-tmp",
            Protection::HiddenCredentials => "hidden-credentials",
            Protection::PidNamespace => "pid-namespace",
            Protection::NoNetwork => "no-network",
            Protection::EnvAllowList => "env-allow-list",
            Protection::NoCapabilities => "no-capabilities",
            Protection::NoHostSockets => "no-host-sockets",
            Protection::ReadOnlyGit => "read-only-git",
            Protection::ReadOnlyRunFolder => "read-only-run-folder",
            Protection::BoundedResources => "bounded-resources",
        }
    }
}

/// The protections the default profile has, minus the network when the job allows it.
fn profile(policy: &SandboxPolicy) -> Vec<Protection> {
    use Protection::*;
    let mut all = vec![
        ReadOnlyOutsideWorkspace,
        PrivateTmp,
        HiddenCredentials,
        PidNamespace,
        EnvAllowList,
        NoCapabilities,
        NoHostSockets,
        ReadOnlyGit,
        ReadOnlyRunFolder,
        BoundedResources,
    ];
    if !policy.network {
        all.push(NoNetwork);
    }
    all
}

/// Find out what can be enforced of `policy` and settle its mechanism: bubblewrap when it
/// runs the profile here, else the fallback launcher. What is listed as enforced under
/// bubblewrap is what the start-up probe saw from inside ([`super::report`]). Blocking;
/// takes a few ms (a bubblewrap start and a probe: tens under load).
pub fn establish(policy: SandboxPolicy) -> (SandboxPolicy, Probe) {
    establish_with(policy, &AtomicBool::new(false))
}

/// [`establish`], stopped between its steps once `stop` is set (the run needs no sandbox
/// any more): `None` then, and what it made so far is gone.
pub(super) fn establish_unless(
    policy: SandboxPolicy,
    stop: &AtomicBool,
) -> Option<(SandboxPolicy, Probe)> {
    let established = establish_with(policy, stop);
    (!stop.load(Ordering::SeqCst)).then_some(established)
}

fn establish_with(mut policy: SandboxPolicy, stop: &AtomicBool) -> (SandboxPolicy, Probe) {
    let mut notes = Vec::new();
    if policy.mode != SandboxMode::Off {
        match policy.mechanism.clone() {
            Mechanism::Bubblewrap(path) => match try_bwrap(&mut policy, &mut notes, stop) {
                Ok(report) => {
                    let mut p = Probe::off();
                    p.mechanism = ContainedBy::Bubblewrap;
                    for protection in profile(&policy) {
                        match report.check(protection, &policy) {
                            Ok(()) => p.enforced.push(protection),
                            Err(why) => {
                                p.missing.push(protection);
                                notes.push(format!("{}: {why}", protection.as_str()));
                            }
                        }
                    }
                    p.hosts_unreachable = !policy.hosts.is_empty() && policy.proxy_port().is_none();
                    p.notes = notes;
                    policy.established_fully = p.fully_enforced();
                    return (policy, p);
                }
                Err(SandboxError::NotNeeded) => return (SandboxPolicy::off(), Probe::pending()),
                Err(why) => {
                    policy.run_net = None;
                    policy.run_box = None;
                    // What bubblewrap could not do is moot when it cannot run at all.
                    notes.clear();
                    notes.push(format!("bubblewrap ({}) cannot run: {why}", path.display()))
                }
            },
            Mechanism::Landlock => notes.push(
                "bubblewrap (`bwrap`, Debian package `bubblewrap`) is not installed".to_owned(),
            ),
        }
        policy.mechanism = Mechanism::Landlock;
    }
    let mut p = probe(&policy);
    notes.append(&mut p.notes);
    p.notes = notes;
    p.hosts_unreachable = !policy.hosts.is_empty();
    policy.established_fully = p.fully_enforced();
    (policy, p)
}

/// Pin the supervisor, make the run's shared namespaces (and proxy) and cgroup where cn-run
/// may, else say why in `notes`; then read the report of a command started as the run's
/// commands will be. Between the steps, `stop` ends it (what was made is dropped): the
/// cgroup comes after the namespaces, so a set-up stopped by then leaves no folder to wait
/// for.
fn try_bwrap(
    policy: &mut SandboxPolicy,
    notes: &mut Vec<String>,
    stop: &AtomicBool,
) -> Result<Report, SandboxError> {
    let go_on = || match stop.load(Ordering::SeqCst) {
        true => Err(SandboxError::NotNeeded),
        false => Ok(()),
    };
    let mut step = std::time::Instant::now();
    let mut timed = |what: &str| timing(what, std::mem::replace(&mut step, Instant::now()));
    policy.pinned = Some(std::sync::Arc::new(super::Pinned::open(&policy.launcher)?));
    timed("pin");
    go_on()?;
    if let Mechanism::Bubblewrap(_) = &policy.mechanism {
        match super::RunNet::new(&policy.hosts, !policy.network) {
            Ok(net) => policy.run_net = Some(std::sync::Arc::new(net)),
            Err(why) => {
                notes.push(format!(
                    "each command gets namespaces of its own (slower): the run's shared \
                     namespaces could not be made: {why}"
                ));
                start_relay(policy, notes);
            }
        }
    }
    timed("namespaces");
    go_on()?;
    if rustix::process::geteuid().is_root() {
        make_cgroup(policy, notes);
    }
    timed("cgroup");
    // The run's one sandbox proves bubblewrap runs the profile; else one bubblewrap does.
    go_on()?;
    if policy.run_net.is_some()
        && let Some(report) = start_run_box(policy, notes, stop)?
    {
        timed("holder_and_report");
        return Ok(report);
    }
    let report = run_report(policy);
    timed("report");
    report
}

/// Logs how long a step of the set-up took (`CN_RUN_LOG=cn_run=debug`), in the form the
/// benches read: `sandbox-timing what=<step> us=<microseconds>`.
fn timing(what: &str, since: Instant) {
    let us = since.elapsed().as_micros() as u64;
    tracing::debug!(what = %what, us, "sandbox-timing");
}

/// The run's cgroup, or why there is none in `notes`. Nothing is in it yet: the threads
/// that start the run's commands move in as the run's sandbox starts ([`start_run_box`]),
/// else each command's supervisor joins it.
fn make_cgroup(policy: &mut SandboxPolicy, notes: &mut Vec<String>) {
    match super::RunCgroup::create(&policy.limits) {
        Ok(c) => policy.cgroup = Some(std::sync::Arc::new(c)),
        Err(why) => notes.push(format!(
            "memory is bounded per process, not for the run, and processes by the run's PID \
             namespace where it can (the kernel exempts root from RLIMIT_NPROC): {why}"
        )),
    }
}

/// With a host list and no shared namespace (an ordinary user): the proxy on a Unix socket
/// in a private folder of the run's, relayed inside each command (see `relay`).
fn start_relay(policy: &mut SandboxPolicy, notes: &mut Vec<String>) {
    if policy.hosts.is_empty() {
        return;
    }
    let started = tempfile::Builder::new()
        .prefix("cn-run-sandbox-")
        .tempdir()
        .map_err(super::error::os("cannot make a private folder"))
        .and_then(|dir| {
            let relay = super::RunRelay::start(dir.path(), &policy.hosts)?;
            policy.private_tmp = Some(std::sync::Arc::new(dir));
            Ok(relay)
        });
    match started {
        Ok(relay) => policy.relay = Some(std::sync::Arc::new(relay)),
        Err(why) => notes.push(format!(
            "tools.bash.network lists hosts, but cn-run's proxy could not start ({why}): \
             commands reach no host"
        )),
    }
}

/// Start the run's one bubblewrap that each command enters (root, with the shared
/// namespaces) and read a command's report in it; keep a bubblewrap per command when it
/// cannot. Told to stop while the holder started, it removes the holder and starts no
/// probe (`NotNeeded`): a run that ended without a command waits for neither.
fn start_run_box(
    policy: &mut SandboxPolicy,
    notes: &mut Vec<String>,
    stop: &AtomicBool,
) -> Result<Option<Report>, SandboxError> {
    let (Some(net), Mechanism::Bubblewrap(path)) = (&policy.run_net, &policy.mechanism) else {
        return Ok(None);
    };
    let (path, profile) = (path.clone(), super::bwrap::profile(policy));
    // The holder joins the cgroup itself (`--cgroup-fd`); the namespace thread and the
    // thread inside move in while it starts.
    let hold = policy.supervised(&["--hold"], &[]);
    let bound = super::pid_bound::writer(policy);
    let cgroup = policy.cgroup.clone().map(|c| (c, vec![net.tid()]));
    let Some(guard) = guard_command(policy) else {
        return Ok(None);
    };
    let since = Instant::now();
    let started = net
        .run(move || super::RunBox::start(&path, profile, hold, bound, cgroup, guard))
        .map_err(super::error::os("cannot reach the namespace thread"))
        .and_then(|r| r);
    timing("holder", since);
    let why = match started {
        Ok(run_box) => {
            if stop.load(Ordering::SeqCst) {
                return Err(SandboxError::NotNeeded);
            }
            notes.extend(super::pid_bound::note(&run_box));
            policy.run_box = Some(std::sync::Arc::new(run_box));
            match run_report(policy) {
                Ok(report) => return Ok(Some(report)),
                Err(why) => why,
            }
        }
        Err(why) => why,
    };
    policy.run_box = None;
    notes.push(format!(
        "each command gets a bubblewrap of its own (slower): the run's one sandbox could not \
         be entered: {why}"
    ));
    Ok(None)
}

/// The holder's guard ([`super::guard`]): the pinned supervisor on the host with
/// `--guard`, cn-run's pid and the run's cgroup folders.
fn guard_command(policy: &SandboxPolicy) -> Option<Vec<std::ffi::OsString>> {
    let mut argv = policy.pinned.as_ref()?.host_command()?;
    argv.extend([
        "--guard".into(),
        "--run-pid".into(),
        std::process::id().to_string().into(),
    ]);
    for dir in policy.cgroup.iter().flat_map(|c| c.dirs()) {
        argv.extend(["--cgroup-dir".into(), dir.into()]);
    }
    Some(argv)
}

/// Start the supervisor's report the way a command of the run would start, and read it.
fn run_report(policy: &SandboxPolicy) -> Result<Report, SandboxError> {
    let cwd = policy
        .writable
        .first()
        .cloned()
        .unwrap_or_else(|| "/".into());
    let line = policy.supervised(&["--report"], &[]);
    let (program, args) = match (&policy.run_box, &policy.mechanism) {
        (None, Mechanism::Bubblewrap(bwrap)) => {
            let mut a = super::bwrap::profile(policy);
            a.extend(["--chdir".into(), cwd.clone().into_os_string(), "--".into()]);
            a.extend(line);
            (bwrap.clone().into_os_string(), a)
        }
        _ => super::split(line),
    };
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .current_dir(&cwd)
        .env_clear()
        .stdin(std::process::Stdio::null());
    let out = match policy.spawner() {
        Some(spawner) => spawner.run(move || cmd.output()).and_then(|r| r),
        None => cmd.output(),
    }
    .map_err(super::error::os("cannot start the probe in the sandbox"))?;
    match serde_json::from_slice(&out.stdout) {
        Ok(report) if out.status.success() => Ok(report),
        _ => Err(SandboxError::TrueFailed {
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            status: out.status,
        }),
    }
}

/// What the current mechanism enforces of `policy`; for the fallback launcher, found by
/// running it in probe mode (the same set-up, then a report instead of a command).
pub fn probe(policy: &SandboxPolicy) -> Probe {
    if !policy.is_active() {
        let mut p = Probe::off();
        p.missing = profile(policy);
        return p;
    }
    if policy.mode != SandboxMode::Off && matches!(policy.mechanism, Mechanism::Bubblewrap(_)) {
        return establish(policy.clone()).1;
    }
    let mut p = launcher_probe(policy);
    p.mechanism = ContainedBy::Landlock;
    let fs_ok = p.filesystem == Enforcement::Full;
    let net_ok = p.network == Enforcement::Full;
    for protection in profile(policy) {
        let ok = match protection {
            Protection::ReadOnlyOutsideWorkspace => fs_ok,
            Protection::NoNetwork => net_ok,
            Protection::EnvAllowList => policy.mode != SandboxMode::Off,
            Protection::NoCapabilities => p.no_capabilities,
            Protection::NoHostSockets => p.no_unix_sockets,
            _ => false,
        };
        if ok {
            p.enforced.push(protection)
        } else {
            p.missing.push(protection)
        }
    }
    p
}

/// Run the launcher in probe mode and read its report.
fn launcher_probe(policy: &SandboxPolicy) -> Probe {
    let mut args = policy.launcher_args(&[]);
    args.insert(1, "--probe".into());
    let out = std::process::Command::new(&policy.launcher)
        .args(&args)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output();
    let failed = |why: String| Probe {
        filesystem: requested(policy.mode != SandboxMode::Off, Enforcement::None),
        network: requested(!policy.network, Enforcement::None),
        notes: vec![why],
        ..Probe::off()
    };
    match out {
        Ok(o) => serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
            failed(format!(
                "the sandbox launcher {} did not report ({}): {}",
                policy.launcher.display(),
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }),
        Err(e) => failed(format!(
            "cannot start the sandbox launcher {}: {e}",
            policy.launcher.display()
        )),
    }
}

/// `value` when the part was asked for, else [`Enforcement::Off`].
fn requested(asked: bool, value: Enforcement) -> Enforcement {
    if asked { value } else { Enforcement::Off }
}

/// A run's record as it ends: one still `pending` (no command ran, so the set-up was
/// stopped) becomes `not-needed`, saying so; any other is left as it is.
pub fn settle_unused(status: &mut super::SandboxStatus) {
    if status.mechanism != ContainedBy::Pending {
        return;
    }
    status.mechanism = ContainedBy::NotNeeded;
    status.notes = vec![
        "no command ran, so the sandbox was not set up (it is made while the run starts, \
         and only the first command waits for it); a command would have run under the \
         mode, network and limits recorded here"
            .to_owned(),
    ];
}
