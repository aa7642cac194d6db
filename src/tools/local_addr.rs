//! Which IP addresses are not the public internet, for Fetch: the special-purpose ranges
//! (IANA's IPv4 and IPv6 special-purpose registries, RFC 6890 and its updates) and every
//! address of this machine's own interfaces, whatever its range — a runner's public
//! address reaches the services listening on it as surely as 127.0.0.1 does.
//!
//! IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated
//! `::ffff:0:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`) are judged
//! by the IPv4 address inside them too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv4 special-purpose ranges: (network, prefix length, what it is).
const V4: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 8, "\"this network\" (0.0.0.0/8)"),
    ([10, 0, 0, 0], 8, "private network"),
    (
        [100, 64, 0, 0],
        10,
        "carrier-grade NAT (shared address space)",
    ),
    ([127, 0, 0, 0], 8, "loopback"),
    (
        [169, 254, 0, 0],
        16,
        "link-local, where cloud metadata services live",
    ),
    ([172, 16, 0, 0], 12, "private network"),
    ([192, 0, 0, 0], 24, "IETF protocol assignment"),
    ([192, 0, 2, 0], 24, "documentation (TEST-NET-1)"),
    ([192, 31, 196, 0], 24, "AS112 service"),
    ([192, 52, 193, 0], 24, "AMT relay"),
    ([192, 88, 99, 0], 24, "6to4 relay anycast"),
    ([192, 168, 0, 0], 16, "private network"),
    ([192, 175, 48, 0], 24, "direct delegation AS112 service"),
    ([198, 18, 0, 0], 15, "benchmarking"),
    ([198, 51, 100, 0], 24, "documentation (TEST-NET-2)"),
    ([203, 0, 113, 0], 24, "documentation (TEST-NET-3)"),
    ([224, 0, 0, 0], 4, "multicast"),
    ([240, 0, 0, 0], 4, "reserved (and broadcast)"),
];

/// IPv6 special-purpose ranges.
const V6: &[(u128, u8, &str)] = &[
    (0, 128, "unspecified (\"this host\")"),
    (1, 128, "loopback"),
    (
        0x0100_0000_0000_0000_0000_0000_0000_0000,
        64,
        "discard-only",
    ),
    (
        0x2001_0000_0000_0000_0000_0000_0000_0000,
        23,
        "IETF protocol assignment (Teredo, ORCHID, benchmarking)",
    ),
    (
        0x2001_0db8_0000_0000_0000_0000_0000_0000,
        32,
        "documentation",
    ),
    (
        0x3fff_0000_0000_0000_0000_0000_0000_0000,
        20,
        "documentation",
    ),
    (
        0x5f00_0000_0000_0000_0000_0000_0000_0000,
        16,
        "segment routing",
    ),
    (
        0xfc00_0000_0000_0000_0000_0000_0000_0000,
        7,
        "unique local (private network)",
    ),
    (0xfe80_0000_0000_0000_0000_0000_0000_0000, 10, "link-local"),
    (
        0xfec0_0000_0000_0000_0000_0000_0000_0000,
        10,
        "site-local (deprecated)",
    ),
    (0xff00_0000_0000_0000_0000_0000_0000_0000, 8, "multicast"),
];

/// What kind of non-public address `ip` is, or `None` for a public one. `own` are this
/// machine's interface addresses.
pub(crate) fn local_kind(ip: IpAddr, own: &[IpAddr]) -> Option<&'static str> {
    if own.contains(&ip) {
        return Some("address of this machine");
    }
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) if own.contains(&IpAddr::V4(v4)) => Some("address of this machine"),
            Some(v4) => special_v4(v4).or_else(|| special_v6(v6)),
            None => special_v6(v6),
        },
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4.iter()
        .find(|(net, len, _)| {
            let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
            bits & mask == u32::from_be_bytes(*net) & mask
        })
        .map(|(_, _, kind)| *kind)
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(ip);
    V6.iter()
        .find(|(net, len, _)| {
            let mask = u128::MAX.checked_shl(128 - u32::from(*len)).unwrap_or(0);
            bits & mask == net & mask
        })
        .map(|(_, _, kind)| *kind)
}

/// The IPv4 address an IPv6 address carries, in the forms that reach it.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    let s = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765's SIIT form).
    if bits >> 32 == 0xffff_0000 {
        return Some(low);
    }
    // IPv4-compatible (::a.b.c.d, deprecated but still routed by some stacks).
    if bits >> 32 == 0 && bits > 1 {
        return Some(low);
    }
    // NAT64: the well-known prefix and the local-use one.
    if bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
    {
        return Some(low);
    }
    // 6to4: 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2])));
    }
    None
}

/// The addresses of this machine's interfaces, up or down (empty if they cannot be read).
pub(crate) fn own_addresses() -> Vec<IpAddr> {
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    addrs
        .filter_map(|a| a.address)
        .filter_map(|s| {
            s.as_sockaddr_in()
                .map(|v4| IpAddr::V4(v4.ip()))
                .or_else(|| s.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str, own: &[IpAddr]) -> Option<&'static str> {
        local_kind(s.parse().unwrap(), own)
    }

    #[test]
    fn special_ranges_are_local() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.9.8.7",
            "100.64.0.1",
            "100.127.255.254",
            "127.8.0.1",
            "169.254.169.254",
            "172.31.0.1",
            "192.0.0.8",
            "192.0.2.5",
            "192.88.99.1",
            "192.168.0.1",
            "198.18.0.1",
            "198.19.255.1",
            "198.51.100.2",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "::ffff:0:127.0.0.1",
            "::ffff:0:10.1.2.3",
            "::ffff:0:a9fe:a9fe",
            "::ffff:0:192.168.1.1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::a00:1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "100::1",
            "2001:db8::1",
            "2001::1",
        ] {
            assert!(kind(ip, &[]).is_some(), "{ip} was taken as public");
        }
    }

    #[test]
    fn public_addresses_are_public_unless_they_are_this_machines() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "100.128.0.1",
            "172.32.0.1",
            "198.20.0.1",
            "2606:4700::1111",
            "64:ff9b::808:808",
            "::ffff:0:8.8.8.8",
        ] {
            assert_eq!(kind(ip, &[]), None, "{ip}");
        }
        let own: IpAddr = "11.22.33.44".parse().unwrap();
        assert_eq!(kind("11.22.33.44", &[own]), Some("address of this machine"));
        for form in ["::ffff:11.22.33.44", "::ffff:0:11.22.33.44"] {
            assert_eq!(
                kind(form, &[own]),
                Some("address of this machine"),
                "{form}"
            );
        }
    }

    #[test]
    fn this_machines_loopback_is_among_its_addresses() {
        let own = own_addresses();
        assert!(own.contains(&"127.0.0.1".parse().unwrap()), "{own:?}");
    }
}
