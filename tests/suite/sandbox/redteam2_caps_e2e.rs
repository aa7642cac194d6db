//! Second red-team round (issue 29, capabilities and privileges): what root can do to the
//! host that no namespace of the sandbox separates, and what needs a capability the first
//! round did not try. Contained root commands (the run's default sandbox):
//! - read a secret the host keeps in root's kernel keyring (`add_key`/`keyctl` are not
//!   namespaced for a process that stays uid 0 without a user namespace) and plant a key
//!   there for the host's next root process;
//! - raise their own scheduling priority (`renice -n -5`, `CAP_SYS_NICE`), take another
//!   group (`setgroups`, `CAP_SETGID`), `chroot` (`CAP_SYS_CHROOT`), read the kernel log
//!   (`dmesg` under `kernel.dmesg_restrict`, `CAP_SYSLOG`).
//!
//! Each payload leaves `esc-TAG` in the workspace only when it had its effect. The control:
//! the same payloads uncontained (`sandbox: off`) have every effect.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::containment_scene::{Scene, User, bash, user_available};

/// Keyring calls by python: `read NAME` prints the key's text, `plant NAME` adds one,
/// `add NAME TEXT` prints the new id, `find NAME` prints its id (≤ 0: none), `drop ID`.
const KEYS_PY: &str = r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
def search(desc):
    return libc.syscall(250, 10, -4, b"user", desc.encode(), 0)
def read(kid):
    buf = ctypes.create_string_buffer(256)
    n = libc.syscall(250, 11, kid, buf, 256)
    return buf.raw[:max(n, 0)].decode()
def add(desc, text):
    return libc.syscall(248, b"user", desc.encode(), text.encode(), len(text), -4)
cmd, arg = sys.argv[1], sys.argv[2]
if cmd == "read":
    kid = search(arg)
    if kid > 0:
        print("host key:", read(kid))
elif cmd == "plant":
    print("planted:", add(arg, "planted"))
elif cmd == "add":
    print(add(arg, sys.argv[3]))
elif cmd == "find":
    print(search(arg))
elif cmd == "drop":
    libc.syscall(250, 21, int(arg))
"#;

/// `keys.py` run on the host (uncontained, as the test's root).
fn host_keys(dir: &Path, args: &[&str]) -> i64 {
    let out = Command::new("python3")
        .arg(dir.join("keys.py"))
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(-1)
}

/// A key in root's user keyring, invalidated when dropped.
struct HostKey {
    id: i64,
    name: String,
    secret: String,
    dir: PathBuf,
}

impl HostKey {
    fn add(dir: &Path) -> HostKey {
        let tag = fastrand::u64(..);
        let name = format!("cn-run-rt2-host-{tag}");
        let secret = format!("KEYRING-SECRET-{tag}");
        let id = host_keys(dir, &["add", &name, &secret]);
        assert!(id > 0, "the host could not add a key");
        HostKey {
            id,
            name,
            secret,
            dir: dir.to_path_buf(),
        }
    }
}

impl Drop for HostKey {
    fn drop(&mut self) {
        host_keys(&self.dir, &["drop", &self.id.to_string()]);
    }
}

/// (tag, payload): each leaves `esc-TAG` only when it had its effect.
fn payloads(key: &HostKey, planted: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "keyring-read",
            format!(
                "python3 keys.py read {} | grep -q {} && touch esc-keyring-read",
                key.name, key.secret
            ),
        ),
        ("keyring-plant", format!("python3 keys.py plant {planted}")),
        (
            "renice",
            "renice -n -5 -p $$ && touch esc-renice".to_owned(),
        ),
        (
            "setgroups",
            "python3 -c 'import os; os.setgroups([4])' && touch esc-setgroups".to_owned(),
        ),
        ("chroot", "chroot / true && touch esc-chroot".to_owned()),
        ("dmesg", "dmesg > /dev/null && touch esc-dmesg".to_owned()),
    ]
}

/// The payloads' effects under `extra` (None when root and namespaces are not available).
fn effects(extra: &str) -> Option<(Vec<String>, Scene)> {
    if !user_available(User::Root) {
        return None;
    }
    let s = Scene::new();
    std::fs::write(s.ws.join("keys.py"), KEYS_PY).unwrap();
    let key = HostKey::add(&s.ws);
    let planted = format!("cn-run-rt2-planted-{}", fastrand::u64(..));
    let calls: Vec<_> = payloads(&key, &planted)
        .iter()
        .map(|(t, c)| bash(&format!("touch ran-{t}; {c}; true")))
        .collect();
    let r = s.run(&calls, extra);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let mut had: Vec<String> = payloads(&key, &planted)
        .iter()
        .inspect(|(t, _)| assert!(s.ws.join(format!("ran-{t}")).exists(), "{t} did not run"))
        .filter(|(t, _)| s.ws.join(format!("esc-{t}")).exists())
        .map(|(t, _)| (*t).to_owned())
        .collect();
    let planted_id = host_keys(&s.ws, &["find", &planted]);
    if planted_id > 0 {
        host_keys(&s.ws, &["drop", &planted_id.to_string()]);
        had.push("keyring-plant".to_owned());
    }
    Some((had, s))
}

#[test]
fn root_commands_touch_no_host_keyring_and_use_no_new_capability() {
    let Some((had, s)) = effects("") else {
        return;
    };
    assert!(had.is_empty(), "had effects: {had:?}\n{}", s.tool_outputs());
}

#[test]
fn control_uncontained_root_has_every_effect() {
    let Some((mut had, s)) = effects("tools: {bash: {sandbox: off}}\n") else {
        return;
    };
    had.sort();
    assert_eq!(
        had,
        [
            "chroot",
            "dmesg",
            "keyring-plant",
            "keyring-read",
            "renice",
            "setgroups"
        ],
        "{}",
        s.tool_outputs()
    );
}
