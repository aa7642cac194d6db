//! The host allow-list of `tools.bash.network: [hosts]`: which destinations cn-run's proxy
//! ([`super::proxy`]) lets a contained command reach. Matching is on the name the command
//! asked for, never on what it resolves to: an entry `github.com` does not allow the IP
//! literal of github.com, and an entry `140.82.112.3` does not allow a name resolving to it.
//! Names compare without case and without one trailing dot; `*.example.com` matches every
//! name below `example.com` (not `example.com` itself). An entry without a port allows
//! ports 80 and 443 only; `host:port` allows that port only.

use std::fmt;
use std::net::IpAddr;

/// Ports an entry without a port allows (HTTP and HTTPS).
const DEFAULT_PORTS: [u16; 2] = [80, 443];

/// What an entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// One name, lowercase, without a trailing dot.
    Name(String),
    /// `*.SUFFIX`: every name ending in `.SUFFIX`.
    Below(String),
    /// An IP address.
    Ip(IpAddr),
}

/// One entry of the allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRule {
    pattern: Pattern,
    port: Option<u16>,
}

impl fmt::Display for HostRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Pattern::Name(n) => write!(f, "{n}")?,
            Pattern::Below(s) => write!(f, "*.{s}")?,
            Pattern::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
            Pattern::Ip(ip) => write!(f, "{ip}")?,
        }
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

/// Why an entry of `tools.bash.network` is not a host (the job is wrong: exit 2, located by
/// the job loader).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{entry}` is not a host: {why}")]
pub struct HostError {
    pub entry: String,
    pub why: &'static str,
}

impl HostRule {
    /// Read one entry as the job writes it: `github.com`, `*.example.com`, `host:8080`,
    /// `10.0.0.5`, `[::1]:8080`.
    pub fn parse(entry: &str) -> Result<HostRule, HostError> {
        let bad = |why: &'static str| {
            Err(HostError {
                entry: entry.to_owned(),
                why,
            })
        };
        if entry.contains("://") || entry.contains('/') || entry.contains('@') {
            return bad(
                "write the host name alone (`github.com`, `host:8080`), without scheme, path or user",
            );
        }
        let Some((host, port)) = split_port(entry) else {
            return bad("the port must be a number from 1 to 65535");
        };
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(HostRule {
                pattern: Pattern::Ip(ip),
                port,
            });
        }
        let name = normalize(host);
        let (pattern, rest) = match name.strip_prefix("*.") {
            Some(suffix) => (Pattern::Below(suffix.to_owned()), suffix),
            None => (Pattern::Name(name.clone()), name.as_str()),
        };
        if !valid_name(rest) {
            return bad("a host name has letters, digits, `-` and dots (`*.` only at the start)");
        }
        Ok(HostRule { pattern, port })
    }

    /// Whether a request for `host` (as the command wrote it) on `port` is allowed.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(p) => p == port,
            None => DEFAULT_PORTS.contains(&port),
        };
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let host_ok = match (&self.pattern, host.parse::<IpAddr>()) {
            (Pattern::Ip(ip), Ok(asked)) => *ip == asked,
            (_, Ok(_)) | (Pattern::Ip(_), Err(_)) => false,
            (Pattern::Name(n), Err(_)) => *n == normalize(host),
            (Pattern::Below(s), Err(_)) => normalize(host)
                .strip_suffix(s.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        };
        port_ok && host_ok && valid_name_or_ip(host)
    }
}

/// Whether any rule of `rules` allows `host` on `port`.
pub fn allowed(rules: &[HostRule], host: &str, port: u16) -> bool {
    rules.iter().any(|r| r.allows(host, port))
}

/// A name as compared (and connected to): lowercase, without one trailing dot.
pub(crate) fn normalize(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.strip_suffix('.') {
        Some(s) => s.to_owned(),
        None => lower,
    }
}

/// Letters, digits, `-`, `_` and dots, not empty, no empty label.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

fn valid_name_or_ip(host: &str) -> bool {
    host.parse::<IpAddr>().is_ok() || valid_name(&normalize(host))
}

/// `host[:port]` or `[v6][:port]` into the host and the port, if any; `None` for a bad port.
pub(crate) fn split_port(entry: &str) -> Option<(&str, Option<u16>)> {
    let port = |p: &str| p.parse::<u16>().ok().filter(|p| *p != 0);
    if let Some(rest) = entry.strip_prefix('[') {
        let (ip, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(p) => Some((ip, Some(port(p)?))),
            None if after.is_empty() => Some((ip, None)),
            None => None,
        };
    }
    match entry.rsplit_once(':') {
        // Two colons or more: an IPv6 address without brackets, no port.
        Some((host, _)) if host.contains(':') => Some((entry, None)),
        Some((host, p)) => Some((host, Some(port(p)?))),
        None => Some((entry, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[&str]) -> Vec<HostRule> {
        list.iter().map(|e| HostRule::parse(e).unwrap()).collect()
    }

    #[test]
    fn names_match_without_case_or_trailing_dot_on_the_default_ports() {
        let r = rules(&["github.com"]);
        for (host, port) in [
            ("github.com", 443),
            ("GitHub.COM", 80),
            ("github.com.", 443),
        ] {
            assert!(allowed(&r, host, port), "{host}:{port}");
        }
        for (host, port) in [
            ("github.com", 22),
            ("github.com", 8443),
            ("api.github.com", 443),
            ("github.com.evil.net", 443),
            ("evilgithub.com", 443),
            ("github.com..", 443),
            ("140.82.112.3", 443),
            ("", 443),
        ] {
            assert!(!allowed(&r, host, port), "{host}:{port}");
        }
    }

    #[test]
    fn a_wildcard_matches_names_below_only() {
        let r = rules(&["*.Example.com"]);
        assert!(allowed(&r, "a.example.com", 443));
        assert!(allowed(&r, "a.b.EXAMPLE.com.", 443));
        for host in [
            "example.com",
            "aexample.com",
            ".example.com",
            "example.com.evil",
        ] {
            assert!(!allowed(&r, host, 443), "{host}");
        }
    }

    #[test]
    fn ports_and_ip_literals_match_exactly() {
        let r = rules(&["localhost:8080", "127.0.0.2", "[::1]:9000"]);
        assert!(allowed(&r, "LOCALHOST.", 8080));
        assert!(!allowed(&r, "localhost", 8081));
        assert!(!allowed(&r, "localhost", 443));
        assert!(!allowed(&r, "127.0.0.1", 8080), "the IP of a listed name");
        assert!(allowed(&r, "127.0.0.2", 443));
        assert!(!allowed(&r, "127.0.0.2", 8080));
        for spelling in ["127.000.000.002", "0x7f000002", "2130706434", "127.2"] {
            assert!(!allowed(&r, spelling, 443), "{spelling}");
        }
        assert!(allowed(&r, "[::1]", 9000));
        assert!(allowed(&r, "::1", 9000));
        assert!(!allowed(&r, "[::1]", 9001));
    }

    #[test]
    fn bad_entries_are_refused_with_a_reason() {
        for e in [
            "https://github.com",
            "github.com/x",
            "user@host",
            "host:0",
            "host:99999",
            "host:http",
            "*",
            "a.*.com",
            "*example.com",
            "",
            "a..b",
            "[::1",
        ] {
            let err = HostRule::parse(e).unwrap_err();
            assert_eq!(err.entry, e);
            let err = err.to_string();
            assert!(err.contains(e), "{e}: {err}");
        }
        let shown: Vec<String> = rules(&["A.b.", "*.x.y:81", "[::1]:2", "10.0.0.1"])
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(shown, ["a.b", "*.x.y:81", "[::1]:2", "10.0.0.1"]);
    }
}
