//! No host socket (issue 29): a contained command reaches no Unix socket of the host — a
//! root-only socket outside the workspace and under `/run`, a group socket (the shape of
//! `docker.sock`, whose group an ordinary user is in), an abstract socket (no path; shared
//! with the host under `network: true`) — through curl, python, perl, by path or by name,
//! as root and as an ordinary user, with the network off or allowed. Listeners in the test
//! record every connection; the controls run the same payloads uncontained and are heard.

use std::io::Read;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::containment_scene::{Scene, User, bash, user_available};

/// The group of the group socket (nobody is given it as a supplementary group).
const SOCKET_GROUP: u32 = 4242;

/// A listener that records what each connection sends first.
struct Heard(Arc<Mutex<Vec<String>>>);

impl Heard {
    fn listen(listener: UnixListener) -> Heard {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&heard);
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                let mut buf = [0u8; 256];
                let n = conn.read(&mut buf).unwrap_or(0);
                h.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            }
        });
        Heard(heard)
    }

    fn all(&self) -> String {
        self.0.lock().unwrap().join("|")
    }
}

/// The host's sockets for one test: by path (mode, group) and abstract.
struct Sockets {
    _run_dir: Option<tempfile::TempDir>,
    paths: Vec<(PathBuf, Heard)>,
    abstract_name: String,
    abstract_heard: Heard,
}

fn bind_path(path: &Path, mode: u32, group: u32) -> Heard {
    let l = UnixListener::bind(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    std::os::unix::fs::chown(path, Some(0), Some(group)).unwrap();
    Heard::listen(l)
}

impl Sockets {
    /// Root-only sockets outside the workspace and under `/run` (as root), or the group
    /// socket under `/run` (for nobody: a folder the scene does not give it); an abstract
    /// one either way.
    fn new(s: &Scene, user: User) -> Sockets {
        let dir = tempfile::Builder::new()
            .prefix("cn-run-test-")
            .tempdir_in("/run")
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let docker = dir.path().join("docker.sock");
        let paths = match user {
            User::Root => {
                let own = s.outside.join("root.sock");
                vec![
                    (own.clone(), bind_path(&own, 0o600, 0)),
                    (docker.clone(), bind_path(&docker, 0o660, 0)),
                ]
            }
            User::Nobody => vec![(docker.clone(), bind_path(&docker, 0o660, SOCKET_GROUP))],
        };
        let name = format!("cn-run-test-{}", fastrand::u64(..));
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let abstract_heard = Heard::listen(UnixListener::bind_addr(&addr).unwrap());
        Sockets {
            _run_dir: Some(dir),
            paths,
            abstract_name: name,
            abstract_heard,
        }
    }

    /// (tag, command) for every way in; each first writes `ran-TAG` in the workspace.
    fn cases(&self, s: &Scene) -> Vec<(String, String)> {
        let mut v = Vec::new();
        for (i, (path, _)) in self.paths.iter().enumerate() {
            let p = path.display();
            let tag = |how: &str| format!("p{i}-{how}");
            v.push((
                tag("curl"),
                format!("curl -sS -m 3 --unix-socket {p} http://x/{}", tag("curl")),
            ));
            v.push((
                tag("python"),
                format!(
                    "python3 -c \"import socket;s=socket.socket(socket.AF_UNIX);s.connect('{p}');s.send(b'{}')\"",
                    tag("python")
                ),
            ));
            v.push((
                tag("python-numeric"),
                format!(
                    "python3 -c \"import socket;s=socket.socket(1,1|524288);s.connect('{p}');s.send(b'{}')\"",
                    tag("python-numeric")
                ),
            ));
            v.push((
                tag("perl"),
                format!(
                    "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer=>\"{p}\")->print(\"{}\")'",
                    tag("perl")
                ),
            ));
        }
        let n = &self.abstract_name;
        v.push((
            "abstract-curl".to_owned(),
            format!("curl -sS -m 3 --abstract-unix-socket {n} http://x/abstract-curl"),
        ));
        v.push((
            "abstract-python".to_owned(),
            format!(
                "python3 -c \"import socket;s=socket.socket(socket.AF_UNIX);s.connect('\\0{n}');s.send(b'abstract-python')\""
            ),
        ));
        v.into_iter()
            .map(|(t, c)| {
                let cmd = format!("touch '{}/ran-{t}'; {c}", s.ws());
                (t, cmd)
            })
            .collect()
    }

    fn heard(&self) -> String {
        let mut all: Vec<String> = self.paths.iter().map(|(_, h)| h.all()).collect();
        all.push(self.abstract_heard.all());
        all.join("|")
    }
}

/// Run every case as `user` with the job's `extra` settings; (what the listeners heard,
/// the tags, the scene, the run).
fn try_sockets(user: User, extra: &str) -> Option<(String, Vec<String>, Scene)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[SOCKET_GROUP]);
    let sockets = Sockets::new(&s, user);
    let cases = sockets.cases(&s);
    let calls: Vec<Value> = cases.iter().map(|(_, c)| bash(c)).collect();
    let r = s.run(&calls, extra);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    for (tag, _) in &cases {
        assert!(
            s.ws.join(format!("ran-{tag}")).exists(),
            "{tag} did not run\n{}",
            s.transcript(&r)
        );
    }
    // Give the listeners a moment to read what reached them.
    std::thread::sleep(Duration::from_millis(300));
    let tags = cases.into_iter().map(|(t, _)| t).collect();
    Some((sockets.heard(), tags, s))
}

fn assert_heard_nothing(user: User, extra: &str) {
    let Some((heard, _, s)) = try_sockets(user, extra) else {
        return;
    };
    let words: Vec<&str> = heard.split('|').filter(|w| !w.is_empty()).collect();
    assert!(words.is_empty(), "reached: {words:?}\n{}", s.tool_outputs());
}

fn assert_heard_all(user: User, extra: &str) {
    let Some((heard, tags, s)) = try_sockets(user, extra) else {
        return;
    };
    for tag in tags {
        assert!(
            heard.contains(&tag),
            "{tag} not heard: {heard}\n{}",
            s.tool_outputs()
        );
    }
}

#[test]
fn root_commands_reach_no_host_socket() {
    assert_heard_nothing(User::Root, "");
}

#[test]
fn root_commands_with_the_network_reach_no_host_socket() {
    assert_heard_nothing(User::Root, "tools: {bash: {network: true}}\n");
}

#[test]
fn an_ordinary_users_commands_reach_no_group_or_abstract_socket() {
    assert_heard_nothing(User::Nobody, "tools: {bash: {network: true}}\n");
}

#[test]
fn an_ordinary_users_commands_without_network_reach_no_host_socket() {
    assert_heard_nothing(User::Nobody, "");
}

#[test]
fn control_uncontained_root_reaches_every_socket() {
    assert_heard_all(User::Root, "tools: {bash: {sandbox: off}}\n");
}

#[test]
fn control_an_uncontained_ordinary_user_in_the_group_reaches_the_group_and_abstract_sockets() {
    assert_heard_all(User::Nobody, "tools: {bash: {sandbox: off}}\n");
}
