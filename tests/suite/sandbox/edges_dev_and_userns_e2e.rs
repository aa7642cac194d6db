//! Fifth round (issue 29, limits): memory-backed space no limit sized. bubblewrap's `/dev`
//! is a tmpfs of no size that the command's user owns, and an ordinary user's command could
//! make a user namespace of its own and mount a tmpfs there: files in either are memory past
//! `limits.memory` and `limits.tmp` (measured: 300 MB in `/dev` under a 96 MiB limit, as
//! `nobody`). Each payload writes five 40 MB files (200 MB) into one such place and leaves
//! `got-TAG` in the workspace only when all five were written; the limits are 96 MiB of
//! memory and 8 MiB of temporary space. Places: `/dev` itself by python and by `dd` after
//! `cd /dev`, a tmpfs mounted after `unshare -Urm`, after `unshare --user --map-root-user
//! --mount` in long form, after `unshare(2)` through python's ctypes, inside a nested
//! `bwrap`, and `/dev` remounted writable from a new user namespace. As root (whose cgroup
//! bounds memory where it can make one) and as `nobody`. The control runs the same payloads
//! in a plain bubblewrap (`--dev /dev`, no filter): each gets its 200 MB.

use std::process::Command;

use serde_json::{Value, json};

use super::containment_scene::{Scene, User, bash, user_available};

const LIMITS: &str =
    "tools: {bash: {limits: {memory: 96MiB, processes: 64, tmp: 8MiB, file_size: 64MiB}}}\n";

/// Writes five 40 MB files into folder `$1`; `got-$2` in the workspace when all are there.
const FILL: &str = "import sys\n\
for i in range(5):\n    open('%s/fill%d' % (sys.argv[1], i), 'wb').write(b'x' * (40 << 20))\n\
open(sys.argv[3] + '/got-' + sys.argv[2], 'w').close()\n";

/// Mounts a tmpfs on `/mnt` from the user namespace `unshare(2)` made, then fills it.
const CTYPES: &str = "import ctypes, os, subprocess, sys\n\
l = ctypes.CDLL(None, use_errno=True)\n\
assert l.unshare(0x10000000 | 0x20000) == 0, ctypes.get_errno()\n\
open('/proc/self/setgroups', 'w').write('deny')\n\
open('/proc/self/uid_map', 'w').write('0 %d 1' % int(sys.argv[2]))\n\
open('/proc/self/gid_map', 'w').write('0 %d 1' % int(sys.argv[3]))\n\
assert l.mount(b'none', b'/mnt', b'tmpfs', 0, None) == 0, ctypes.get_errno()\n\
subprocess.run([sys.executable, 'fill.py', '/mnt', 'ctypes', sys.argv[1]], check=True)\n";

/// (tag, shell payload run in the workspace `$W`).
const PAYLOADS: &[(&str, &str)] = &[
    ("dev-python", "python3 fill.py /dev dev-python \"$W\""),
    (
        "dev-dd",
        "cd /dev && for i in 0 1 2 3 4; do dd if=/dev/zero of=d$i bs=1M count=40 status=none || exit 1; done && touch \"$W/got-dev-dd\"",
    ),
    (
        "unshare-short",
        "unshare -Urm sh -c 'mount -t tmpfs none /mnt && python3 fill.py /mnt unshare-short \"$W\"'",
    ),
    (
        "unshare-long",
        "unshare --user --map-root-user --mount sh -c 'mount -t tmpfs none /mnt && python3 fill.py /mnt unshare-long \"$W\"'",
    ),
    ("ctypes", "python3 userns.py \"$W\" $(id -u) $(id -g)"),
    (
        "nested-bwrap",
        "bwrap --dev-bind / / --tmpfs /mnt python3 fill.py /mnt nested-bwrap \"$W\"",
    ),
    (
        "dev-remount",
        "unshare -Urm sh -c 'mount -o remount,rw,bind /dev && python3 fill.py /dev dev-remount \"$W\"'",
    ),
];

/// The payload script `run-TAG.sh` (with `$W` the workspace).
fn script(ws: &str, command: &str) -> String {
    format!("export W='{ws}'\ncd \"$W\"\n{command}\n")
}

fn calls(s: &Scene) -> Vec<Value> {
    let write = |path: &str, content: &str| json!({"name": "Write", "arguments": {"filepath": path, "content": content}});
    let mut calls = vec![write("fill.py", FILL), write("userns.py", CTYPES)];
    for (tag, command) in PAYLOADS {
        calls.push(write(&format!("run-{tag}.sh"), &script(&s.ws(), command)));
        calls.push(bash(&format!(
            "sh run-{tag}.sh 2>&1 | tail -3; echo done-{tag}"
        )));
    }
    calls
}

/// The tags whose payload got its 200 MB.
fn got(s: &Scene) -> Vec<&'static str> {
    PAYLOADS
        .iter()
        .map(|(tag, _)| *tag)
        .filter(|tag| s.ws.join(format!("got-{tag}")).exists())
        .collect()
}

#[test]
fn no_command_holds_memory_in_dev_or_a_tmpfs_of_its_own() {
    for user in [User::Root, User::Nobody] {
        if !user_available(user) {
            continue;
        }
        let s = Scene::for_user(user, &[]);
        let r = s.run(&calls(&s), LIMITS);
        assert_eq!(r.code, 0, "{user:?}: {}", s.transcript(&r));
        s.assert_contained(&r);
        let out = s.tool_outputs();
        for (tag, _) in PAYLOADS {
            // Each payload ran (as root the cgroup may end a call before its last line).
            assert!(
                s.ws.join(format!("run-{tag}.sh")).exists(),
                "{user:?}: {tag}"
            );
        }
        assert_eq!(got(&s), Vec::<&str>::new(), "{user:?}\n{out}");
    }
}

#[test]
fn control_in_a_plain_bubblewrap_every_payload_gets_its_memory() {
    for user in [User::Root, User::Nobody] {
        if !user_available(user) {
            continue;
        }
        let s = Scene::for_user(user, &[]);
        std::fs::write(s.ws.join("fill.py"), FILL).unwrap();
        std::fs::write(s.ws.join("userns.py"), CTYPES).unwrap();
        let mut want: Vec<&str> = PAYLOADS.iter().map(|(tag, _)| *tag).collect();
        if user == User::Root {
            // Root without capabilities maps no user namespace (uid_map: EPERM): only
            // `/dev` itself.
            want.retain(|t| *t == "dev-python" || *t == "dev-dd");
        }
        let ws = s.ws();
        for (tag, command) in PAYLOADS {
            std::fs::write(s.ws.join(format!("run-{tag}.sh")), script(&ws, command)).unwrap();
        }
        plain_bubblewrap(&s, user);
        assert_eq!(got(&s), want, "{user:?}");
    }
}

/// Runs every payload in a bubblewrap with cn-run's mounts but neither its read-only `/dev`
/// nor its filter (`--cap-drop ALL` as root, as cn-run starts commands), as `user`.
fn plain_bubblewrap(s: &Scene, user: User) {
    let ws = s.ws();
    let run_all: Vec<String> = PAYLOADS
        .iter()
        .map(|(tag, _)| format!("sh run-{tag}.sh >/dev/null 2>&1"))
        .collect();
    let mut cmd = if user == User::Nobody {
        let chown = Command::new("chown")
            .args(["-R", "65534:65534", &ws])
            .status()
            .unwrap();
        assert!(chown.success());
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            "bwrap",
        ]);
        c
    } else {
        let mut c = Command::new("bwrap");
        c.args(["--cap-drop", "ALL"]);
        c
    };
    cmd.args(["--die-with-parent", "--unshare-pid", "--unshare-net"])
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--size", "8388608", "--tmpfs", "/tmp"])
        .args(["--bind", &ws, &ws, "--chdir", &ws])
        .args(["sh", "-c", &format!("{}; true", run_all.join("; "))]);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
}
