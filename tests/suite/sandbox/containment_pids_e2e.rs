//! A process bound for root where no cgroup can be made (issue 29, item 7's gap): cn-run
//! runs in a mount namespace without any cgroup hierarchy (as in a container that mounts
//! none), so the kernel's exemption of uid 0 from `RLIMIT_NPROC` leaves only the run's PID
//! namespace to bound its processes. Counted fork loops, fork bombs in sh, bash, perl and
//! python threads end bounded, the next command still runs, a command cannot raise the
//! bound, cannot signal a process outside, nothing it started is alive after the run, and
//! git and file ownership work as before. The control runs the same loops uncontained: they
//! get all they ask for, and the outside process is killed.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::containment_scene::{Scene, User, bash, user_available};
use crate::support::runner::{Run, run};

const SMALL: &str = "tools: {bash: {limits: {processes: 48}}}\n";
const OFF: &str = "tools: {bash: {sandbox: off, limits: {processes: 48}}}\n";

/// A counted fork loop of 200 sleeping children in perl: `ok-TAG` only if all 200 started.
fn perl_loop(tag: &str) -> String {
    format!(
        "perl -e 'my $n=0; for (1..200) {{ my $p=fork(); last unless defined $p; \
         if(!$p){{sleep 3; exit}} $n++ }} print $n == 200 ? \"ok-{tag}\\n\" : \"{tag}-$n\\n\"'"
    )
}

/// The same in shell (background sleeps) and in python threads.
fn other_loops() -> Vec<String> {
    vec![
        "n=0; for i in $(seq 200); do sleep 3 & n=$((n+1)); done 2>/dev/null; \
         [ \"$(jobs -p | wc -l)\" -ge 200 ] && echo ok-sh-loop || echo sh-loop-short"
            .to_owned(),
        "python3 -c \"
import threading, time
ok = 0
try:
    for i in range(200):
        threading.Thread(target=time.sleep, args=(3,), daemon=True).start(); ok += 1
except RuntimeError:
    pass
print('ok-threads' if ok == 200 else 'threads-%d' % ok)\""
            .to_owned(),
    ]
}

/// Fork bombs the command-safety check does not read (they are in files), each ended by
/// `timeout`, then a marker that the call came back.
fn bombs() -> Vec<String> {
    vec![
        "echo 'sh $0 & sh $0' > b1.sh; timeout 3 sh b1.sh 2>/dev/null; echo after-b1".to_owned(),
        "printf 'f(){ f | f & }; f\\n' > b2.sh; timeout 3 bash b2.sh 2>/dev/null; echo after-b2"
            .to_owned(),
        // Every copy forks until a deadline all inherit, then ends.
        "echo '$e = time + 3; fork while time < $e' > b3.pl; perl b3.pl 2>/dev/null; \
         echo after-b3"
            .to_owned(),
        // Ends only by `timeout`'s SIGTERM (once blocked in every command: it ran until
        // the call's own timeout).
        "echo 'fork while 1' > b5.pl; timeout 3 perl b5.pl 2>/dev/null; echo after-b5".to_owned(),
    ]
}

/// The scene's cn-run command run in a mount namespace without any cgroup hierarchy.
fn without_cgroups(s: &Scene, calls: &[Value], extra: &str) -> Run {
    without_cgroups_on(s, calls, extra, None)
}

/// [`without_cgroups`] with `bin` first on `PATH` (a `bwrap` of the test's).
pub(super) fn without_cgroups_on(
    s: &Scene,
    calls: &[Value],
    extra: &str,
    bin: Option<&Path>,
) -> Run {
    let mut inner = s.command(
        calls
            .iter()
            .map(|c| serde_json::json!({"tool_calls": [c]}))
            .collect(),
        extra,
        &[],
    );
    if let Some(bin) = bin {
        let path = std::env::var("PATH").unwrap_or_default();
        inner.env("PATH", format!("{}:{path}", bin.display()));
    }
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c"])
        .arg("umount -R -l /sys/fs/cgroup 2>/dev/null; exec \"$@\"")
        .arg("sh")
        .arg(inner.get_program())
        .args(inner.get_args());
    if let Some(dir) = inner.get_current_dir() {
        cmd.current_dir(dir);
    }
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    run(cmd, Some(&s.out))
}

/// Whether this kernel keeps `pid_max` per PID namespace (6.14+): without it the bound
/// cannot bind, and the bombs here would run unbounded on the machine.
pub(super) fn pid_max_per_namespace() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let mut next = || {
        parts
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(0)
    };
    let ok = (next(), next()) >= (6, 14);
    if !ok {
        eprintln!("SKIPPED: this kernel has one pid_max for the machine (before 6.14)");
    }
    ok
}

/// A host process for the commands to try to kill.
fn host_sleeper() -> std::process::Child {
    Command::new("sleep").arg("120").spawn().unwrap()
}

fn alive(child: &mut std::process::Child) -> bool {
    child.try_wait().unwrap().is_none()
}

/// Processes whose working folder lies in `ws` (what the run's commands started).
fn left_in(ws: &Path) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(ws))
        })
        .map(|pid| std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default())
        .collect()
}

#[test]
fn root_without_a_cgroup_is_bounded_by_the_runs_pid_namespace() {
    if !user_available(User::Root) || !pid_max_per_namespace() {
        return;
    }
    let s = Scene::new();
    let mut sleeper = host_sleeper();
    let target = sleeper.id();
    let mut calls = vec![bash(&perl_loop("procs"))];
    calls.extend(other_loops().iter().map(|c| bash(c)));
    for b in bombs() {
        calls.push(bash(&b));
        calls.push(bash("echo next-call"));
    }
    calls.extend([
        bash("echo 100000 > /proc/sys/kernel/pid_max || echo raise-refused"),
        bash(&perl_loop("procs-again")),
        bash(&format!("kill -9 {target} || echo kill-refused")),
        bash("git init -q g && cd g && git -c user.email=a@b -c user.name=n commit -q --allow-empty -m x && git log --oneline | wc -l | sed 's/^/git-commits-/'"),
        bash("touch owned && stat -c 'owner-%u' owned"),
        bash("echo 'sh $0 & sh $0' > b4.sh; (setsid sh b4.sh &) ; sleep 1; echo left-a-bomb"),
        bash("kill -9 -1; echo never"),
    ]);
    let r = without_cgroups(&s, &calls, SMALL);
    let out = s.tool_outputs();
    let left = left_in(&s.ws);
    assert!(alive(&mut sleeper), "the host process was killed:\n{out}");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    for tag in ["procs", "sh-loop", "threads", "procs-again"] {
        assert!(
            !out.contains(&format!("ok-{tag}")),
            "{tag} not bounded:\n{out}"
        );
    }
    for marker in [
        // (The shell loop may end with bash's own fork error instead of its line.)
        "procs-",
        "threads-",
        "after-b1",
        "after-b2",
        "after-b3",
        "after-b5",
        "raise-refused",
        "kill-refused",
        "git-commits-1",
        "owner-0",
        "left-a-bomb",
    ] {
        assert!(out.contains(marker), "{marker} missing:\n{out}");
    }
    assert_eq!(out.matches("next-call").count(), 4, "{out}");
    assert!(left.is_empty(), "alive after the run: {left:?}");
    let sandbox = &r.result()["sandbox"];
    assert_eq!(
        sandbox["limits"]["processes_by"], "pid-namespace",
        "{sandbox}"
    );
    let enforced = sandbox["enforced"].to_string();
    assert!(enforced.contains("bounded-resources"), "{sandbox}");
}

/// A `bwrap` in `dir` that refuses to start the run's one sandbox (the holder) and starts
/// everything else: each command then gets a bubblewrap of its own.
pub(super) fn no_runs_sandbox(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let real = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap_or("bwrap");
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in *\" --hold \"*) echo refused >&2; exit 1;; esac\n\
         exec {real} \"$@\"\n"
    );
    let path = dir.join("bwrap");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// More bombs: the classic one in a file, python's `os.fork` loop, a double fork that
/// leaves its bomb to the supervisor, threads made by `clone` directly (python `ctypes`).
fn more_bombs() -> Vec<String> {
    vec![
        "echo ':(){ :|:& };:' > b6.sh; timeout 3 bash b6.sh 2>/dev/null; echo after-b6".to_owned(),
        "printf 'import os\\nwhile True:\\n    try: os.fork()\\n    except OSError: pass\\n' \
         > b7.py; timeout 3 python3 b7.py 2>/dev/null; echo after-b7"
            .to_owned(),
        "echo 'sh $0 & sh $0' > b8.sh; (sh -c 'setsid sh b8.sh &' &); sleep 2; echo after-b8"
            .to_owned(),
        "python3 -c \"
import threading, time
n = 0
try:
    while n < 1000:
        threading.Thread(target=time.sleep, args=(3,), daemon=True).start(); n += 1
except RuntimeError:
    pass
print('clone-%d' % n)\""
            .to_owned(),
    ]
}

/// Root without a cgroup where the run's one sandbox cannot start: each command's own
/// bubblewrap is bounded by its supervisor, PID 1 there, before the command starts. Fails
/// without the change: every loop gets its 200, `processes_by` says `none`.
#[test]
fn root_without_a_cgroup_with_a_bubblewrap_per_command_is_bounded_per_command() {
    if !user_available(User::Root) || !pid_max_per_namespace() {
        return;
    }
    let s = Scene::new();
    let bin = tempfile::tempdir().unwrap();
    no_runs_sandbox(bin.path());
    let mut sleeper = host_sleeper();
    let target = sleeper.id();
    let mut calls = vec![bash(&perl_loop("procs"))];
    calls.extend(other_loops().iter().map(|c| bash(c)));
    for b in bombs().into_iter().chain(more_bombs()) {
        calls.push(bash(&b));
        calls.push(bash("echo next-call"));
    }
    calls.extend([
        bash("echo 100000 > /proc/sys/kernel/pid_max || echo raise-refused"),
        bash("umount /proc/sys 2>/dev/null || echo umount-refused"),
        bash(&format!("kill -9 {target} || echo kill-refused")),
        bash("grep -E '^Cap(Eff|Prm)' /proc/self/status | tr '\\t' ' '"),
        bash("touch owned && stat -c 'owner-%u' owned"),
    ]);
    let r = without_cgroups_on(&s, &calls, SMALL, Some(bin.path()));
    let out = s.tool_outputs();
    let left = left_in(&s.ws);
    assert!(alive(&mut sleeper), "the host process was killed:\n{out}");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let sandbox = &r.result()["sandbox"];
    assert!(
        sandbox["notes"]
            .to_string()
            .contains("bubblewrap of its own"),
        "{sandbox}"
    );
    for tag in ["procs", "sh-loop", "threads"] {
        assert!(
            !out.contains(&format!("ok-{tag}")),
            "{tag} not bounded:\n{out}"
        );
    }
    assert!(!out.contains("clone-1000"), "threads not bounded:\n{out}");
    for marker in [
        "procs-",
        "threads-",
        "clone-",
        "after-b1",
        "after-b2",
        "after-b3",
        "after-b5",
        "after-b6",
        "after-b7",
        "after-b8",
        "raise-refused",
        "umount-refused",
        "kill-refused",
        "CapEff: 0000000000000000",
        "CapPrm: 0000000000000000",
        "owner-0",
    ] {
        assert!(out.contains(marker), "{marker} missing:\n{out}");
    }
    assert_eq!(out.matches("next-call").count(), 8, "{out}");
    assert!(left.is_empty(), "alive after the run: {left:?}");
    assert_eq!(
        sandbox["limits"]["processes_by"], "pid-namespace",
        "{sandbox}"
    );
    assert!(
        sandbox["enforced"]
            .to_string()
            .contains("bounded-resources"),
        "{sandbox}"
    );
}

#[test]
fn control_uncontained_root_without_a_cgroup_gets_every_process_and_kills_outside() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    let mut sleeper = host_sleeper();
    let mut calls = vec![bash(&perl_loop("procs"))];
    calls.extend(other_loops().iter().map(|c| bash(c)));
    calls.push(bash(&format!("kill -9 {} && echo killed", sleeper.id())));
    let r = without_cgroups(&s, &calls, OFF);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let out = s.tool_outputs();
    for tag in ["procs", "sh-loop", "threads"] {
        assert!(out.contains(&format!("ok-{tag}")), "{tag}:\n{out}");
    }
    assert!(out.contains("killed"), "{out}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!alive(&mut sleeper));
}
