//! The name resolver of Fetch's HTTP client: the addresses it hands the connection are the
//! addresses that were checked.
//!
//! A host name checked once and then looked up again by the HTTP client can answer a
//! public address to the check and `127.0.0.1` to the connection (DNS rebinding). Here the
//! connection only ever gets addresses judged by `local_addr`: the ones the permission
//! check looked up (pinned, no second lookup), or for a redirect target the one lookup
//! made now, each judged before it is handed over. Local addresses pass only for the host
//! a rule allowed.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// How long a lookup may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(3);

/// Resolves with the pinned addresses, else one lookup, and refuses local addresses.
pub(crate) struct GuardedResolver {
    pinned: HashMap<String, Vec<IpAddr>>,
    local_ok: HashSet<String>,
}

impl GuardedResolver {
    /// `pinned`: host → the addresses the check judged; `local_ok`: hosts whose local
    /// addresses a rule allowed.
    pub(crate) fn new(pinned: HashMap<String, Vec<IpAddr>>, local_ok: HashSet<String>) -> Self {
        GuardedResolver { pinned, local_ok }
    }
}

/// Why a host's addresses were not handed to the connection.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    #[error(
        "{host} resolves to {ip}, not a public address ({kind}); not connected (fetching a local address needs a permission rule naming it)"
    )]
    Local {
        host: String,
        ip: IpAddr,
        kind: &'static str,
    },
    #[error("{host} did not resolve: {why}")]
    Unresolved { host: String, why: String },
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let pinned = self.pinned.get(&host).cloned();
        let local_ok = self.local_ok.contains(&host);
        Box::pin(async move {
            let addrs = match pinned {
                Some(addrs) if !addrs.is_empty() => addrs,
                _ => lookup(&host).await?,
            };
            if !local_ok {
                let own = super::local_addr::own_addresses();
                for ip in &addrs {
                    if let Some(kind) = super::local_addr::local_kind(*ip, &own) {
                        let host = host.clone();
                        return Err(Box::new(Refused::Local {
                            host,
                            ip: *ip,
                            kind,
                        }) as _);
                    }
                }
            }
            let list = addrs.into_iter().map(|ip| SocketAddr::new(ip, 0));
            Ok(Box::new(list) as Addrs)
        })
    }
}

async fn lookup(host: &str) -> Result<Vec<IpAddr>, Refused> {
    let unresolved = |why: String| Refused::Unresolved {
        host: host.to_owned(),
        why,
    };
    match tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((host, 0))).await {
        Ok(Ok(found)) => {
            let addrs: Vec<IpAddr> = found.map(|a| a.ip()).collect();
            if addrs.is_empty() {
                Err(unresolved("no address".to_owned()))
            } else {
                Ok(addrs)
            }
        }
        Ok(Err(e)) => Err(unresolved(e.to_string())),
        Err(_) => Err(unresolved(format!(
            "no answer in {} s",
            LOOKUP_TIMEOUT.as_secs()
        ))),
    }
}
