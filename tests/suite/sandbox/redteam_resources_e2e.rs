//! Red-team round (issue 29, resources): memory the first round did not try to take —
//! a `memfd_create` file and a SysV shared memory segment, neither of which a per-process
//! data limit counts — and disk by `fallocate` (the program and python's
//! `posix_fallocate`) rather than by writing. Each payload is bounded by its own count
//! (256 MiB of memory, 64 MiB of disk) and leaves `got-TAG` only when it got what it asked.
//! As root the run's cgroup and `RLIMIT_FSIZE` bind all of them; as an ordinary user the
//! file-size limit binds (memory as an ordinary user: see SECURITY.md, not covered). The
//! control with roomy limits gets every one.

use serde_json::Value;

use super::containment_scene::{Scene, User, bash, user_available};

const TIGHT: &str =
    "tools: {bash: {limits: {memory: 96MiB, processes: 48, tmp: 8MiB, file_size: 8MiB}}}\n";
const ROOMY: &str =
    "tools: {bash: {limits: {memory: 3GiB, processes: 2000, tmp: 64MiB, file_size: 1GiB}}}\n";

/// (tag, command): each writes `got-TAG` in the workspace only when it got it all.
fn cases(s: &Scene, user: User) -> Vec<(&'static str, String)> {
    let ws = s.ws();
    let got = |tag: &str| format!("touch '{ws}/got-{tag}'");
    let mut v = vec![
        (
            "fallocate",
            format!("fallocate -l 64MiB '{ws}/big1' && {}", got("fallocate")),
        ),
        (
            "posix-fallocate",
            format!(
                "python3 -c \"import os;fd=os.open('{ws}/big2',os.O_CREAT|os.O_WRONLY);os.posix_fallocate(fd,0,64<<20)\" && {}",
                got("posix-fallocate")
            ),
        ),
    ];
    if user == User::Root {
        v.extend([
            (
                "memfd",
                format!(
                    "python3 -c \"import os;fd=os.memfd_create('x');[os.write(fd,b'x'*(1<<20)) for _ in range(256)]\" && {}",
                    got("memfd")
                ),
            ),
            (
                "sysv-shm",
                format!(
                    "python3 -c \"import ctypes;l=ctypes.CDLL(None);l.shmat.restype=ctypes.c_void_p;i=l.shmget(0,256<<20,0o1600);p=l.shmat(i,None,0);assert p not in (None,2**64-1);ctypes.memset(p,120,256<<20)\" && {}",
                    got("sysv-shm")
                ),
            ),
        ]);
    }
    v
}

/// (scene, the tags that got what they asked, every tag, what bound memory).
fn run(user: User, limits: &str) -> Option<(Scene, Vec<String>, Vec<String>, String)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[]);
    let cases = cases(&s, user);
    let calls: Vec<Value> = cases
        .iter()
        .map(|(t, c)| bash(&format!("touch '{}/ran-{t}'; {c}", s.ws())))
        .collect();
    let r = s.run(&calls, limits);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let mut all = Vec::new();
    let mut got = Vec::new();
    for (t, _) in &cases {
        assert!(s.ws.join(format!("ran-{t}")).exists(), "{t} did not run");
        all.push((*t).to_owned());
        if s.ws.join(format!("got-{t}")).exists() {
            got.push((*t).to_owned());
        }
    }
    let memory_by = r.result()["sandbox"]["limits"]["memory_by"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    Some((s, got, all, memory_by))
}

#[test]
fn root_commands_get_no_shared_memory_or_allocated_disk_past_the_limits() {
    let Some((s, mut got, _, memory_by)) = run(User::Root, TIGHT) else {
        return;
    };
    if memory_by != "cgroup" {
        // Without a cgroup, shared memory is not bounded (SECURITY.md: not covered).
        eprintln!("shared memory not checked: memory bound by {memory_by}");
        got.retain(|t| !["memfd", "sysv-shm"].contains(&t.as_str()));
    }
    assert_eq!(got, Vec::<String>::new(), "{}", s.tool_outputs());
}

#[test]
fn an_ordinary_users_commands_allocate_no_disk_past_the_file_size_limit() {
    let Some((s, got, _, _)) = run(User::Nobody, TIGHT) else {
        return;
    };
    assert_eq!(got, Vec::<String>::new(), "{}", s.tool_outputs());
}

#[test]
fn control_with_roomy_limits_every_payload_gets_what_it_asks() {
    for user in [User::Root, User::Nobody] {
        let Some((s, got, all, _)) = run(user, ROOMY) else {
            continue;
        };
        assert_eq!(got, all, "{user:?}: {}", s.tool_outputs());
    }
}
