//! Memory past the limit as an ordinary user (issue 29, item 7's gap): without a cgroup,
//! memory is bounded per process by `RLIMIT_DATA`, which does not count a `memfd_create`
//! file (one command wrote 256 MiB under a 96 MiB limit; the file-size limit bounds only
//! each file). `memfd_create` now answers ENOSYS there, so programs fall back to
//! `/dev/shm`, the sandbox's sized tmpfs. The payloads: a memfd written, one truncated and
//! written through a mapping, one from libc by ctypes, one by perl's raw system call, and
//! the fallbacks (`/dev/shm`, `/tmp`); each leaves `got-TAG` only when it got 256 MiB. The
//! control runs them with the sandbox off: each gets it.
//!
//! Root without a cgroup (no hierarchy in view) has the same per-process bound, and SysV
//! shared memory besides: a segment detached and kept is memory no process holds. The run's
//! IPC namespace (or each command's, with a bubblewrap per command) gets `shmall`,
//! `shmmax` and `msgmni` within the memory limit, set by root before any command starts.

use serde_json::Value;

use super::containment_scene::{Scene, User, bash, user_available};

/// A memory bound far below the payloads, and a file size above them (so only the memory
/// bound can stop a memfd).
const TIGHT: &str =
    "tools: {bash: {limits: {memory: 96MiB, processes: 48, tmp: 8MiB, file_size: 1GiB}}}\n";
const OFF: &str = "tools: {bash: {sandbox: off}}\n";

/// (tag, command): each writes `got-TAG` in the workspace only when it got 256 MiB.
fn cases(s: &Scene) -> Vec<(&'static str, String)> {
    let ws = s.ws();
    let got = |tag: &str| format!("touch '{ws}/got-{tag}'");
    let py = |tag: &str, code: &str| ("", format!("python3 -c \"{code}\" && {}", got(tag)));
    let mut v: Vec<(&'static str, String)> = vec![
        ("memfd-write", py("memfd-write", "import os;fd=os.memfd_create('x');[os.write(fd,b'x'*(1<<20)) for _ in range(256)]").1),
        ("memfd-mmap", py("memfd-mmap", "import os,mmap;fd=os.memfd_create('y');os.ftruncate(fd,256<<20);m=mmap.mmap(fd,256<<20);[m.__setitem__(slice(i<<20,(i+1)<<20),b'y'*(1<<20)) for i in range(256)]").1),
        ("memfd-libc", py("memfd-libc", "import ctypes,os;l=ctypes.CDLL(None);fd=l.memfd_create(b'z',0);assert fd>=0;[os.write(fd,b'z'*(1<<20)) for _ in range(256)]").1),
        (
            "memfd-perl",
            format!(
                "perl -e 'my $n=\"p\"; my $fd=syscall(319,$n,0); die if $fd<0; open(my $f,\">&=\",$fd) or die; print $f \"p\" x (1<<20) for 1..256; close $f or die' 2>/dev/null && {}",
                got("memfd-perl")
            ),
        ),
        py_file("dev-shm", &format!("/dev/shm/{}", big(s)), &got("dev-shm")),
        py_file("tmp", &format!("/tmp/{}", big(s)), &got("tmp")),
    ];
    if !cfg!(target_arch = "x86_64") {
        v.retain(|(t, _)| *t != "memfd-perl");
    }
    v
}

/// A file name of this scene's own for the fallbacks (removed after the run: the control
/// writes it on the host).
fn big(s: &Scene) -> String {
    let unique =
        s.ws.parent()
            .and_then(|p| p.file_name())
            .unwrap_or_default();
    format!("cn-run-mem-{}", unique.to_string_lossy())
}

/// 256 MiB written to `path` one MiB at a time (not one buffer: the data limit would stop
/// python itself).
fn py_file(tag: &'static str, path: &str, got: &str) -> (&'static str, String) {
    (
        tag,
        format!(
            "python3 -c \"f=open('{path}','wb');[f.write(b'x'*(1<<20)) for _ in range(256)];f.close()\" && {got}"
        ),
    )
}

/// Run the cases as `user` under `limits`: (scene, the tags that got it all, every tag).
fn run(user: User, limits: &str) -> Option<(Scene, Vec<String>, Vec<String>, Value)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[]);
    let cases = cases(&s);
    let calls: Vec<Value> = cases
        .iter()
        .map(|(t, c)| bash(&format!("touch '{}/ran-{t}'; {c}", s.ws())))
        .collect();
    let r = s.run(&calls, limits);
    for dir in ["/tmp", "/dev/shm"] {
        let _ = std::fs::remove_file(std::path::Path::new(dir).join(big(&s)));
    }
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let (mut got, mut all) = (Vec::new(), Vec::new());
    for (t, _) in &cases {
        assert!(
            s.ws.join(format!("ran-{t}")).exists(),
            "{t} did not run: {}",
            s.transcript(&r)
        );
        all.push((*t).to_owned());
        if s.ws.join(format!("got-{t}")).exists() {
            got.push((*t).to_owned());
        }
    }
    let sandbox = r.result()["sandbox"].clone();
    Some((s, got, all, sandbox))
}

#[test]
fn an_ordinary_users_commands_get_no_memfd_or_shared_file_memory_past_the_limits() {
    let Some((s, got, _, sandbox)) = run(User::Nobody, TIGHT) else {
        return;
    };
    assert_eq!(
        sandbox["limits"]["memory_by"], "rlimit-per-process",
        "{sandbox}"
    );
    assert_eq!(got, Vec::<String>::new(), "{}", s.tool_outputs());
    // Refused, not ended some other way: memfd is not there, the folders are full.
    let out = s.tool_outputs();
    assert_eq!(out.matches("Function not implemented").count(), 2, "{out}");
    assert_eq!(out.matches("No space left on device").count(), 2, "{out}");
}

#[test]
fn control_uncontained_every_memory_payload_gets_what_it_asks() {
    let Some((s, got, all, _)) = run(User::Nobody, OFF) else {
        return;
    };
    assert_eq!(got, all, "{}", s.tool_outputs());
}

/// SysV segments of 16 MiB, each filled, detached and kept, up to 256 MiB; and one segment
/// of 256 MiB; then memfd (`got-TAG` only when all of it was had).
fn sysv_cases(s: &Scene) -> Vec<(&'static str, String)> {
    let ws = s.ws();
    let py = |tag: &'static str, code: &str| {
        (
            tag,
            format!("python3 -c \"{code}\" && touch '{ws}/got-{tag}'"),
        )
    };
    vec![
        py(
            "sysv-kept",
            "import ctypes;l=ctypes.CDLL(None);l.shmat.restype=ctypes.c_void_p\n\
             for _ in range(16):\n\
             \x20i=l.shmget(0,16<<20,0o1600);assert i>=0;p=l.shmat(i,None,0);assert p not in (None,2**64-1);ctypes.memset(p,120,16<<20);l.shmdt(ctypes.c_void_p(p))",
        ),
        py(
            "sysv-one",
            "import ctypes;l=ctypes.CDLL(None);l.shmat.restype=ctypes.c_void_p;i=l.shmget(0,256<<20,0o1600);assert i>=0;p=l.shmat(i,None,0);assert p not in (None,2**64-1);ctypes.memset(p,120,256<<20)",
        ),
        py(
            "memfd",
            "import os;fd=os.memfd_create('x');[os.write(fd,b'x'*(1<<20)) for _ in range(256)]",
        ),
    ]
}

/// Run the SysV cases as root without any cgroup hierarchy in view (`per_command`: with a
/// bubblewrap per command); the tags that got it all, every tag.
fn root_without_cgroups(
    extra: &str,
    per_command: bool,
) -> (Scene, Vec<String>, Vec<String>, Value) {
    use super::containment_pids_e2e::{no_runs_sandbox, without_cgroups_on};
    let s = Scene::new();
    let cases = sysv_cases(&s);
    let calls: Vec<Value> = cases
        .iter()
        .map(|(t, c)| bash(&format!("touch '{}/ran-{t}'; {c}", s.ws())))
        .collect();
    let bin = tempfile::tempdir().unwrap();
    no_runs_sandbox(bin.path());
    let r = without_cgroups_on(&s, &calls, extra, per_command.then(|| bin.path()));
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let (mut got, mut all) = (Vec::new(), Vec::new());
    for (t, _) in &cases {
        assert!(
            s.ws.join(format!("ran-{t}")).exists(),
            "{t}: {}",
            s.transcript(&r)
        );
        all.push((*t).to_owned());
        if s.ws.join(format!("got-{t}")).exists() {
            got.push((*t).to_owned());
        }
    }
    let sandbox = r.result()["sandbox"].clone();
    (s, got, all, sandbox)
}

#[test]
fn root_without_a_cgroup_gets_no_sysv_or_memfd_memory_past_the_limit() {
    if !user_available(User::Root) || !super::containment_pids_e2e::pid_max_per_namespace() {
        return;
    }
    for per_command in [false, true] {
        let (s, got, _, sandbox) = root_without_cgroups(TIGHT, per_command);
        assert_eq!(
            sandbox["limits"]["memory_by"], "rlimit-per-process",
            "{sandbox}"
        );
        let own = sandbox["notes"]
            .to_string()
            .contains("bubblewrap of its own");
        assert_eq!(own, per_command, "{sandbox}");
        assert_eq!(
            got,
            Vec::<String>::new(),
            "per command {per_command}: {}",
            s.tool_outputs()
        );
        // Refused by the bounds, not ended some other way (an OOM kill, a crash).
        let out = s.tool_outputs();
        assert!(out.contains("Function not implemented"), "memfd: {out}");
        assert_eq!(out.matches("AssertionError").count(), 2, "SysV: {out}");
    }
}

#[test]
fn control_uncontained_root_without_a_cgroup_gets_the_sysv_and_memfd_memory() {
    if !user_available(User::Root) {
        return;
    }
    let (s, got, all, _) = root_without_cgroups(OFF, false);
    assert_eq!(got, all, "{}", s.tool_outputs());
}
