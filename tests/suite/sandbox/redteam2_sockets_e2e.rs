//! Second red-team round (issue 29, host sockets): ways into a host Unix socket neither
//! earlier round tried — a link to the socket made in the workspace, the shell's and its
//! parent's `/proc/<pid>/root` by number, `//` and `..` spellings, `/var/run/../run`, an
//! address family with high bits set (`socket(1 | 1<<32, …)`: the kernel reads an `int`), a
//! non-blocking close-on-exec socket, `logger` to a datagram socket, perl's
//! `IO::Socket::UNIX` — as root (a root-only socket under `/run`, network off and on) and as
//! an ordinary user in the socket's group (a group socket, `docker.sock` shape). Listeners
//! record every byte; the control runs the same payloads uncontained and is heard.

use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::Path;
use std::time::Duration;

use super::containment_scene::{Scene, User, bash, user_available};
use super::redteam_sockets_e2e::{Heard, own};

/// The group of the group sockets (nobody gets it as a supplementary group).
const GROUP: u32 = 4244;

/// The host's sockets under `/run` (a stream and a datagram one) and what reached them.
struct Host {
    _run: tempfile::TempDir,
    heard: Heard,
    cases: Vec<(&'static str, String)>,
}

impl Host {
    fn new(user: User) -> Host {
        let heard = Heard::default();
        let run = tempfile::Builder::new()
            .prefix("cn-run-rt2-")
            .tempdir_in("/run")
            .unwrap();
        own(run.path(), 0o755, 0);
        let (mode, group) = match user {
            User::Root => (0o600, 0),
            User::Nobody => (0o660, GROUP),
        };
        let bus = run.path().join("bus");
        let dgram = run.path().join("log.sock");
        heard.stream(UnixListener::bind(&bus).unwrap());
        own(&bus, mode, group);
        heard.datagram(UnixDatagram::bind(&dgram).unwrap());
        own(&dgram, mode, group);
        let cases = cases(&bus, &dgram);
        Host {
            _run: run,
            heard,
            cases,
        }
    }
}

fn cases(bus: &Path, dgram: &Path) -> Vec<(&'static str, String)> {
    let b = bus.display().to_string();
    let name = bus.parent().unwrap().file_name().unwrap().to_string_lossy();
    let py = |tag: &str, path: &str, kind: &str| {
        format!(
            "python3 -c \"import socket;s=socket.socket(socket.AF_UNIX,{kind});s.setblocking(True);s.connect('{path}');s.send(b'{tag}')\""
        )
    };
    vec![
        (
            "link",
            format!("ln -sf {b} l.sock && echo link | socat -u - UNIX-CONNECT:l.sock"),
        ),
        (
            "pid-root",
            format!("echo pid-root | socat -u - UNIX-CONNECT:/proc/$$/root{b}"),
        ),
        (
            "ppid-root",
            format!(
                "python3 -c \"import os,socket;s=socket.socket(socket.AF_UNIX);s.connect('/proc/%d/root{b}' % os.getppid());s.send(b'ppid-root')\""
            ),
        ),
        (
            "slashes",
            format!("echo slashes | socat -u - UNIX-CONNECT://run//{name}/./../{name}/bus"),
        ),
        (
            "var-run-up",
            format!("echo var-run-up | socat -u - UNIX-CONNECT:/var/run/../run/{name}/bus"),
        ),
        (
            "high-bits",
            format!(
                "python3 -c \"import ctypes,struct;l=ctypes.CDLL(None);fd=l.syscall(41,1|(1<<32),1,0);p=b'{b}';a=struct.pack('H',1)+p+bytes(108-len(p));print(fd,l.connect(fd,a,len(a)),l.write(fd,b'high-bits',9))\""
            ),
        ),
        (
            "nonblock",
            py(
                "nonblock",
                &b,
                "socket.SOCK_STREAM|socket.SOCK_NONBLOCK|socket.SOCK_CLOEXEC",
            ),
        ),
        (
            "logger",
            format!("logger -d -u {} logger-tag", dgram.display()),
        ),
        (
            "perl-io",
            format!(
                "perl -MIO::Socket::UNIX -e '$s=IO::Socket::UNIX->new(Peer=>\"{b}\") or die $!; print $s \"perl-io\"'"
            ),
        ),
    ]
}

/// What the listeners heard when `user` ran every case under `extra`.
fn heard(user: User, extra: &str) -> Option<(String, Vec<&'static str>, Scene)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[GROUP]);
    let host = Host::new(user);
    let calls: Vec<_> = host
        .cases
        .iter()
        .map(|(t, c)| bash(&format!("touch ran-{t}; {c}")))
        .collect();
    let r = s.run(&calls, extra);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    for (t, _) in &host.cases {
        assert!(s.ws.join(format!("ran-{t}")).exists(), "{t} did not run");
    }
    std::thread::sleep(Duration::from_millis(300));
    let tags = host.cases.iter().map(|(t, _)| *t).collect();
    Some((host.heard.all(), tags, s))
}

fn heard_nothing(user: User, extra: &str) {
    let Some((heard, _, s)) = heard(user, extra) else {
        return;
    };
    assert!(
        heard.is_empty(),
        "{user:?} {extra}: reached: {heard}\n{}",
        s.tool_outputs()
    );
}

#[test]
fn root_commands_reach_no_host_socket_by_a_second_rounds_way() {
    heard_nothing(User::Root, "");
    heard_nothing(User::Root, "tools: {bash: {network: true}}\n");
}

#[test]
fn an_ordinary_users_commands_reach_no_group_socket_by_a_second_rounds_way() {
    heard_nothing(User::Nobody, "");
}

#[test]
fn control_uncontained_every_second_round_way_reaches_its_socket() {
    for user in [User::Root, User::Nobody] {
        let Some((heard, tags, s)) = heard(user, "tools: {bash: {sandbox: off}}\n") else {
            continue;
        };
        for tag in tags {
            let word = if tag == "logger" { "logger-tag" } else { tag };
            assert!(
                heard.contains(word),
                "{user:?}: {tag} not heard: {heard}\n{}",
                s.tool_outputs()
            );
        }
    }
}
