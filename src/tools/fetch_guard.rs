//! The private-address rule of the Fetch tool.
//!
//! An agent that can fetch `http://169.254.169.254/` reads the cloud metadata service, and
//! one that can fetch `http://127.0.0.1:…` (or the runner's own public address) talks to
//! whatever listens on the CI runner. So a URL whose host is local — a special-purpose
//! range, an address of this machine, `localhost` — written literally or reached through
//! DNS, needs a permission rule naming it. The addresses judged are the addresses connected
//! to: `fetch_dns` hands the connection only what was checked, with no second lookup. A redirect is checked again: a
//! public page that redirects to a private address is refused, unless the fetch was to
//! that same private host in the first place (and so was allowed by a rule).

use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

use reqwest::Url;

/// How long a DNS lookup may take before the host is treated as unresolved.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

/// What kind of non-public address `ip` is, or `None` for a public one: the special
/// ranges and this machine's own addresses (`local_addr`).
fn private_ip(ip: IpAddr) -> Option<&'static str> {
    super::local_addr::local_kind(ip, &super::local_addr::own_addresses())
}

/// The host of `url` as an IP address, when it is written as one (the URL parser has
/// already turned forms such as `2130706433` into dotted quads).
fn literal_ip(url: &Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Why the host written in `url` is not public (an IP literal or a `localhost` name).
fn literal_reason(url: &Url) -> Option<String> {
    if let Some(ip) = literal_ip(url) {
        return private_ip(ip).map(|k| format!("{ip} is not a public address ({k})"));
    }
    let name = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    (name == "localhost" || name.ends_with(".localhost"))
        .then(|| format!("{name} is the local machine"))
}

/// The host name of `url` to resolve: `None` for an IP literal or a URL without a host.
fn domain(url: &Url) -> Option<&str> {
    if literal_ip(url).is_some() {
        return None;
    }
    url.host_str()
}

/// Why `url` points at a loopback/private/link-local address: its host as written, or any
/// of `resolved` (the addresses its host name resolves to). `None` when it is public.
pub fn private_reason(url: &Url, resolved: &[IpAddr]) -> Option<String> {
    if let Some(why) = literal_reason(url) {
        return Some(why);
    }
    let host = url.host_str().unwrap_or_default();
    resolved.iter().find_map(|ip| {
        private_ip(*ip).map(|k| format!("{host} resolves to {ip}, not a public address ({k})"))
    })
}

/// Why a redirect is not followed (the fetch's answer to the model).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectRefused {
    #[error("{original} redirected to {next}, which is not an http(s) URL; not followed")]
    NotHttp { original: String, next: String },
    #[error(
        "{original} redirected to {next}, which is not a public address ({why}); the redirect \
         was not followed. Fetching a private address needs a permission rule naming it."
    )]
    Private {
        original: String,
        next: String,
        why: String,
    },
}

/// Whether a redirect from the fetch of `original` to `next` may be followed; `next_resolved`
/// are the addresses `next`'s host resolves to. The error says why not, for the model.
pub fn check_redirect(
    original: &Url,
    next: &Url,
    next_resolved: &[IpAddr],
) -> Result<(), RedirectRefused> {
    if !matches!(next.scheme(), "http" | "https") {
        return Err(RedirectRefused::NotHttp {
            original: original.to_string(),
            next: next.to_string(),
        });
    }
    let Some(why) = private_reason(next, next_resolved) else {
        return Ok(());
    };
    let same_host = original.host_str() == next.host_str()
        && original.port_or_known_default() == next.port_or_known_default();
    if same_host {
        return Ok(());
    }
    Err(RedirectRefused::Private {
        original: original.to_string(),
        next: next.to_string(),
        why,
    })
}

/// The addresses of `url`'s host name (none for an IP literal or when resolution fails),
/// looked up on a helper thread so a slow resolver cannot hold the caller past
/// [`RESOLVE_TIMEOUT`]. For the synchronous permission check.
pub(crate) fn resolve_blocking(url: &Url) -> Vec<IpAddr> {
    let Some(name) = domain(url) else {
        return Vec::new();
    };
    let target = (name.to_owned(), url.port_or_known_default().unwrap_or(80));
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("cn-run-dns".into())
        .spawn(move || {
            let addrs: Vec<IpAddr> = target
                .to_socket_addrs()
                .map(|it| it.map(|a| a.ip()).collect())
                .unwrap_or_default();
            let _ = tx.send(addrs);
        });
    if spawned.is_err() {
        return Vec::new();
    }
    rx.recv_timeout(RESOLVE_TIMEOUT).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn literal_private_hosts_are_recognised() {
        for u in [
            "http://127.0.0.1:8080/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://localhost:3000/",
            "http://api.localhost/",
            "http://0.0.0.0/",
            "http://2130706433/",
            "http://[2001:db8::1]/",
            "http://100.64.0.1/",
            "http://198.18.0.1/",
            "http://224.0.0.1/",
            "http://[64:ff9b::7f00:1]/",
        ] {
            assert!(private_reason(&url(u), &[]).is_some(), "{u}");
        }
        for u in [
            "https://example.com/",
            "http://8.8.8.8/",
            "http://172.32.0.1/",
            "http://[2606:4700::1111]/",
        ] {
            assert_eq!(private_reason(&url(u), &[]), None, "{u}");
        }
    }

    #[test]
    fn a_name_resolving_to_a_private_address_is_private() {
        let ip: IpAddr = "10.0.0.7".parse().unwrap();
        let why = private_reason(&url("https://intranet.example.com/"), &[ip]).unwrap();
        assert!(why.contains("10.0.0.7"), "{why}");
    }
}
