//! Red-team round (issue 29, host sockets): ways into a host Unix socket the first round
//! did not try — socat and OpenBSD's `nc -U`, datagram and seqpacket sockets, libc's
//! `socket` called through ctypes, sockets found by reading `/proc/net/unix`, sockets under
//! `$XDG_RUNTIME_DIR`'s shape (`/run/<dir>/bus`), the `/var/run` spelling, one the host
//! bound inside the workspace, one in the host's `/tmp`, paths through `/proc/self/root` and
//! `/proc/thread-self/root`, abstract names by socat — as root and as an ordinary user in the
//! socket's group, with the network off and on. Listeners record every byte; the controls
//! run the same payloads uncontained and are heard.

use std::io::Read;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::containment_scene::{Scene, User, bash, user_available};

/// The group of the group sockets (nobody gets it as a supplementary group).
const GROUP: u32 = 4243;

#[derive(Clone, Default)]
pub(super) struct Heard(Arc<Mutex<Vec<String>>>);

impl Heard {
    fn push(&self, bytes: &[u8]) {
        self.0
            .lock()
            .unwrap()
            .push(String::from_utf8_lossy(bytes).into_owned());
    }

    pub(super) fn stream(&self, l: UnixListener) {
        let h = self.clone();
        std::thread::spawn(move || {
            for mut c in l.incoming().flatten() {
                let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
                let mut buf = [0u8; 256];
                let n = c.read(&mut buf).unwrap_or(0);
                h.push(&buf[..n]);
            }
        });
    }

    pub(super) fn datagram(&self, d: UnixDatagram) {
        let h = self.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            while let Ok(n) = d.recv(&mut buf) {
                h.push(&buf[..n]);
            }
        });
    }

    pub(super) fn all(&self) -> String {
        self.0.lock().unwrap().join("|")
    }
}

pub(super) fn own(path: &Path, mode: u32, group: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    std::os::unix::fs::chown(path, Some(0), Some(group)).unwrap();
}

/// The host's sockets of one test, and what reached them.
struct Host {
    _run: tempfile::TempDir,
    _tmp: tempfile::TempDir,
    heard: Heard,
    /// (tag, command) for every way in.
    cases: Vec<(String, String)>,
}

impl Host {
    fn new(s: &Scene, user: User) -> Host {
        let heard = Heard::default();
        // Every name carries this test's token: discovery finds this test's sockets only.
        let token = format!("cn-run-rt-{}-", fastrand::u64(..));
        let run = tempfile::Builder::new()
            .prefix(&token)
            .tempdir_in("/run")
            .unwrap();
        own(run.path(), 0o755, 0);
        let tmp = tempfile::Builder::new()
            .prefix(&token)
            .tempdir_in("/tmp")
            .unwrap();
        own(tmp.path(), 0o755, 0);
        let (mode, group) = match user {
            User::Root => (0o600, 0),
            User::Nobody => (0o660, GROUP),
        };
        let bind = |p: &Path| {
            heard.stream(UnixListener::bind(p).unwrap());
            own(p, mode, group);
        };
        let bus = run.path().join("bus");
        let seq = run.path().join("seq.sock");
        let dgram = run.path().join("dgram.sock");
        let in_tmp = tmp.path().join("x.sock");
        let in_ws = s.ws.join("host.sock");
        for p in [&bus, &in_tmp, &in_ws] {
            bind(p);
        }
        seqpacket(&seq, &heard);
        own(&seq, mode, group);
        heard.datagram(UnixDatagram::bind(&dgram).unwrap());
        own(&dgram, mode, group);
        let name = format!("{token}abstract");
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        heard.stream(UnixListener::bind_addr(&addr).unwrap());
        let var_run = Path::new("/var/run").join(run.path().strip_prefix("/run").unwrap());
        let cases = cases(&Ways {
            bus: &bus,
            seq: &seq,
            dgram: &dgram,
            in_tmp: &in_tmp,
            in_ws: &in_ws,
            var_run: &var_run.join("bus"),
            abstract_name: &name,
            token: &token,
        });
        Host {
            _run: run,
            _tmp: tmp,
            heard,
            cases,
        }
    }
}

/// A seqpacket listener (the standard library has none).
fn seqpacket(path: &Path, heard: &Heard) {
    use socket2::{Domain, SockAddr, Socket, Type};
    let l = Socket::new(Domain::UNIX, Type::SEQPACKET, None).unwrap();
    l.bind(&SockAddr::unix(path).unwrap()).unwrap();
    l.listen(8).unwrap();
    let h = heard.clone();
    std::thread::spawn(move || {
        while let Ok((mut c, _)) = l.accept() {
            let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 256];
            let n = c.read(&mut buf).unwrap_or(0);
            h.push(&buf[..n]);
        }
    });
}

struct Ways<'a> {
    bus: &'a Path,
    seq: &'a Path,
    dgram: &'a Path,
    in_tmp: &'a Path,
    in_ws: &'a Path,
    var_run: &'a Path,
    abstract_name: &'a str,
    token: &'a str,
}

fn cases(w: &Ways) -> Vec<(String, String)> {
    let (bus, seq, dgram) = (w.bus.display(), w.seq.display(), w.dgram.display());
    let (tmp, ws, var_run) = (w.in_tmp.display(), w.in_ws.display(), w.var_run.display());
    let n = w.abstract_name;
    let py = |tag: &str, kind: &str, path: &str| {
        format!(
            "python3 -c \"import socket;s=socket.socket(socket.AF_UNIX,socket.{kind});s.connect('{path}');s.send(b'{tag}')\""
        )
    };
    let v: Vec<(&str, String)> = vec![
        (
            "socat-bus",
            format!("echo socat-bus | socat -u - UNIX-CONNECT:{bus}"),
        ),
        ("nc-bus", format!("echo nc-bus | nc -N -U {bus}")),
        ("nc-dgram", format!("echo nc-dgram | nc -u -U {dgram} -w 1")),
        (
            "socat-dgram",
            format!("echo socat-dgram | socat -u - UNIX-SENDTO:{dgram}"),
        ),
        ("py-dgram", py("py-dgram", "SOCK_DGRAM", &dgram.to_string())),
        ("py-seq", py("py-seq", "SOCK_SEQPACKET", &seq.to_string())),
        (
            "perl-dgram",
            format!(
                "perl -MSocket -e 'socket(S,PF_UNIX,SOCK_DGRAM,0) or die $!; send(S,\"perl-dgram\",0,pack_sockaddr_un(\"{dgram}\")) or die $!'"
            ),
        ),
        (
            "ctypes",
            format!(
                "python3 -c \"import ctypes,socket,struct;l=ctypes.CDLL(None);fd=l.socket(1,1,0);p=b'{bus}';a=struct.pack('H',1)+p+bytes(108-len(p));print(fd,l.connect(fd,a,len(a)),l.write(fd,b'ctypes',6))\""
            ),
        ),
        (
            "discover",
            format!(
                "awk 'NR>1 && $8 ~ /{}/ {{print $8}}' /proc/net/unix | sed 's/^@/ABSTRACT-CONNECT:/; t; s/^/UNIX-CONNECT:/' | while read a; do echo discover | socat -u - \"$a\"; done",
                w.token
            ),
        ),
        (
            "var-run",
            format!("echo var-run | socat -u - UNIX-CONNECT:{var_run}"),
        ),
        (
            "self-root",
            py("self-root", "SOCK_STREAM", &format!("/proc/self/root{bus}")),
        ),
        (
            "thread-root",
            py(
                "thread-root",
                "SOCK_STREAM",
                &format!("/proc/thread-self/root{bus}"),
            ),
        ),
        (
            "host-tmp",
            format!("echo host-tmp | socat -u - UNIX-CONNECT:{tmp}"),
        ),
        ("in-ws", format!("echo in-ws | nc -N -U {ws}")),
        (
            "in-ws-relative",
            "echo in-ws-relative | socat -u - UNIX-CONNECT:host.sock".to_owned(),
        ),
        (
            "socat-abstract",
            format!("echo socat-abstract | socat -u - ABSTRACT-CONNECT:{n}"),
        ),
    ];
    v.into_iter().map(|(t, c)| (t.to_owned(), c)).collect()
}

/// Runs every case as `user` under `extra`; what the listeners heard (or `None` when the
/// user is not available here).
fn try_all(user: User, extra: &str) -> Option<(String, Vec<String>, Scene)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[GROUP]);
    let host = Host::new(&s, user);
    let calls: Vec<_> = host
        .cases
        .iter()
        .map(|(t, c)| bash(&format!("touch '{}/ran-{t}'; {c}", s.ws())))
        .collect();
    let r = s.run(&calls, extra);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    for (t, _) in &host.cases {
        assert!(s.ws.join(format!("ran-{t}")).exists(), "{t} did not run");
    }
    std::thread::sleep(Duration::from_millis(500));
    let tags = host.cases.iter().map(|(t, _)| t.clone()).collect();
    Some((host.heard.all(), tags, s))
}

fn heard_nothing(user: User, extra: &str) {
    let Some((heard, _, s)) = try_all(user, extra) else {
        return;
    };
    let words: Vec<&str> = heard.split('|').filter(|w| !w.is_empty()).collect();
    assert!(words.is_empty(), "reached: {words:?}\n{}", s.tool_outputs());
}

#[test]
fn root_commands_reach_no_host_socket_by_any_new_way() {
    heard_nothing(User::Root, "");
    heard_nothing(User::Root, "tools: {bash: {network: true}}\n");
}

#[test]
fn an_ordinary_users_commands_reach_no_group_socket_by_any_new_way() {
    heard_nothing(User::Nobody, "");
    heard_nothing(User::Nobody, "tools: {bash: {network: true}}\n");
}

#[test]
fn control_uncontained_every_new_way_reaches_its_socket() {
    for user in [User::Root, User::Nobody] {
        let Some((heard, tags, s)) = try_all(user, "tools: {bash: {sandbox: off}}\n") else {
            continue;
        };
        for tag in tags {
            assert!(
                heard.contains(&tag),
                "{user:?}: {tag} not heard: {heard}\n{}",
                s.tool_outputs()
            );
        }
    }
}
