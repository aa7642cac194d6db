//! Bring the loopback device of a new network namespace up: what `ip link set lo up` does,
//! one `RTM_NEWLINK` request over rtnetlink from the thread that is in the namespace. The
//! kernel gives the device 127.0.0.1 and ::1 as it comes up, so servers a command starts on
//! loopback are reachable inside (and cn-run's proxy can listen there).
//!
//! Why by hand: the run's namespace used to come from a bubblewrap holder (which does the
//! same request) started only for this, a process start and a root switch that took 5–20 ms
//! of the run's set-up (issue 38). The request is 32 bytes, its answer an error code; a
//! netlink crate would bring a message model of hundreds of types for it. `nix` opens the
//! socket, so there is no `unsafe` here.

use std::os::fd::AsRawFd;

use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto, socket,
};

use super::error::{SandboxError, os};

/// The sequence number of the one request (its answer echoes it).
const SEQ: u32 = 1;

/// Set the loopback device of the calling thread's network namespace up, and wait for the
/// kernel's answer.
pub(crate) fn up() -> Result<(), SandboxError> {
    let index = nix::net::if_::if_nametoindex("lo").map_err(os("no loopback device"))?;
    let sock = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(os("cannot open an rtnetlink socket"))?;
    let kernel = NetlinkAddr::new(0, 0);
    sendto(
        sock.as_raw_fd(),
        &request(index),
        &kernel,
        MsgFlags::empty(),
    )
    .map_err(os("cannot ask for the loopback device up"))?;
    let mut answer = [0u8; 1024];
    let n = recv(sock.as_raw_fd(), &mut answer, MsgFlags::empty())
        .map_err(os("no answer about the loopback device"))?;
    match acknowledged(&answer[..n]) {
        Some(0) => Ok(()),
        Some(negative) => Err(os("the loopback device did not come up")(
            nix::errno::Errno::from_raw(-negative),
        )),
        None => Err(SandboxError::Os {
            step: "the loopback device's answer".to_owned(),
            source: std::io::Error::other("not an acknowledgement"),
        }),
    }
}

/// `RTM_NEWLINK` for device `index` with `IFF_UP` set, asking for an acknowledgement:
/// `struct nlmsghdr` then `struct ifinfomsg`, in the machine's byte order.
fn request(index: u32) -> Vec<u8> {
    let up = libc::IFF_UP as u32;
    let mut m = Vec::with_capacity(32);
    m.extend(32u32.to_ne_bytes()); // nlmsg_len
    m.extend(libc::RTM_NEWLINK.to_ne_bytes()); // nlmsg_type
    m.extend(((libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16).to_ne_bytes()); // nlmsg_flags
    m.extend(SEQ.to_ne_bytes()); // nlmsg_seq
    m.extend(0u32.to_ne_bytes()); // nlmsg_pid: the kernel fills it
    m.extend([libc::AF_UNSPEC as u8, 0]); // ifi_family, padding
    m.extend(0u16.to_ne_bytes()); // ifi_type
    m.extend(index.to_ne_bytes()); // ifi_index
    m.extend(up.to_ne_bytes()); // ifi_flags
    m.extend(up.to_ne_bytes()); // ifi_change: only IFF_UP changes
    m
}

/// The error code of the kernel's acknowledgement of the request (`NLMSG_ERROR`, 0 for
/// success, else a negative errno), if `answer` is one.
fn acknowledged(answer: &[u8]) -> Option<i32> {
    let u16_at = |i: usize| Some(u16::from_ne_bytes(answer.get(i..i + 2)?.try_into().ok()?));
    let u32_at = |i: usize| Some(u32::from_ne_bytes(answer.get(i..i + 4)?.try_into().ok()?));
    let is_error = u16_at(4)? == libc::NLMSG_ERROR as u16;
    (is_error && u32_at(8)? == SEQ).then_some(i32::from_ne_bytes(u32_at(16)?.to_ne_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_a_newlink_setting_up_and_nothing_else() {
        let m = request(1);
        assert_eq!(m.len(), 32);
        assert_eq!(u32::from_ne_bytes(m[0..4].try_into().unwrap()), 32);
        assert_eq!(u16::from_ne_bytes(m[4..6].try_into().unwrap()), 16); // RTM_NEWLINK
        assert_eq!(u16::from_ne_bytes(m[6..8].try_into().unwrap()), 1 | 4); // REQUEST|ACK
        assert_eq!(i32::from_ne_bytes(m[20..24].try_into().unwrap()), 1);
        assert_eq!(u32::from_ne_bytes(m[24..28].try_into().unwrap()), 1); // IFF_UP
        assert_eq!(u32::from_ne_bytes(m[28..32].try_into().unwrap()), 1);
    }

    #[test]
    fn an_acknowledgement_gives_its_error_code() {
        let ack = |code: i32, seq: u32| {
            let mut a = 36u32.to_ne_bytes().to_vec();
            a.extend(2u16.to_ne_bytes()); // NLMSG_ERROR
            a.extend(0u16.to_ne_bytes());
            a.extend(seq.to_ne_bytes());
            a.extend(0u32.to_ne_bytes());
            a.extend(code.to_ne_bytes());
            a.extend(request(1)[..16].iter());
            a
        };
        assert_eq!(acknowledged(&ack(0, SEQ)), Some(0));
        assert_eq!(acknowledged(&ack(-1, SEQ)), Some(-1));
        assert_eq!(acknowledged(&ack(0, 7)), None, "another request's answer");
        assert_eq!(acknowledged(&[0; 8]), None);
    }
}
