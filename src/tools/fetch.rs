//! The Fetch tool: GET one http(s) URL and give the model its text, with HTML turned into
//! markdown.
//!
//! Bounded everywhere: 10 s to connect, 30 s for the whole fetch (redirects included), a
//! stall timeout between body chunks, a download cap, at most 10 redirects (a loop is
//! stopped as soon as a URL repeats), and 20,000 characters of output with a note of what
//! was cut. Every URL is subject to the permission engine (`Fetch(pattern)`); a URL to a
//! local address (a special range or this machine's own) additionally needs a rule naming
//! it (see `fetch_guard`); the connection gets only the addresses the check judged
//! (`fetch_dns`), and redirects are checked again the same way.

use std::time::Duration;

use reqwest::{Response, Url, header};
use serde_json::Value;

use super::fetch_dns::GuardedResolver;
use super::fetch_guard::{check_redirect, private_reason, resolve_blocking};
use super::fetch_text::{cut, to_text};
use super::grant::{Grant, Judged, Pin};
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, str_arg};
use crate::catalog;
use crate::permissions::{Permission, Tighten};

/// Time and size bounds of one fetch.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchLimits {
    pub connect_timeout: Duration,
    /// For the whole fetch: every redirect and the full body.
    pub total_timeout: Duration,
    /// Longest wait for the next piece of the body.
    pub stall_timeout: Duration,
    /// Bytes downloaded at most; the rest of the body is not read.
    pub max_bytes: usize,
    /// Characters of text shown to the model.
    pub max_chars: usize,
    pub max_redirects: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            stall_timeout: Duration::from_secs(15),
            max_bytes: 5 * 1024 * 1024,
            max_chars: 20_000,
            max_redirects: 10,
        }
    }
}

#[derive(Debug, Default)]
pub struct Fetch {
    limits: FetchLimits,
}

impl Fetch {
    pub fn with_limits(limits: FetchLimits) -> Self {
        Fetch { limits }
    }
}

super::catalogued!(Fetch => catalog::FETCH);

#[async_trait::async_trait]
impl Tool for Fetch {
    /// One lookup of the host, judged here and pinned for the connection.
    fn judge(&self, args: &Value, shared: &ToolShared) -> Judged {
        let Some(url) = args
            .get("url")
            .and_then(Value::as_str)
            .and_then(|u| Url::parse(u.trim()).ok())
        else {
            return Judged::default();
        };
        let resolved = resolve_blocking(&url);
        let private = private_reason(&url, &[]).or_else(|| private_reason(&url, &resolved));
        let tighten = if shared.untrusted() {
            Some(Tighten {
                permission: Permission::Ask,
                rule: "untrusted.network",
                reason:
                    "the run is on untrusted input, so every download needs a rule that names it"
                        .to_owned(),
            })
        } else {
            private.map(|why| Tighten {
                permission: Permission::Ask,
                rule: crate::permissions::PRIVATE_ADDRESS_RULE,
                reason: format!("{url} is not a public address: {why}"),
            })
        };
        Judged {
            tighten,
            pin: Pin::Addrs(resolved),
        }
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "url")?;
        let url = Url::parse(raw.trim())
            .map_err(|e| ToolError::RespondToModel(format!("Invalid URL {raw:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::RespondToModel(format!(
                "Only http:// and https:// URLs can be fetched, not {}:",
                url.scheme()
            )));
        }
        let limits = &self.limits;
        let work = tokio::time::timeout(limits.total_timeout, fetch(&url, limits, &ctx.grant));
        tokio::select! {
            done = work => done.unwrap_or_else(|_| Err(ToolError::RespondToModel(format!(
                "Fetching {url} took longer than {} s and was stopped.",
                limits.total_timeout.as_secs_f64()
            )))),
            _ = ctx.shared.cancel.cancelled() => Err(ToolError::RespondToModel("Fetch stopped: the run is ending.".into())),
        }
    }
}

/// The resolver for a fetch of `url`: the check's addresses pinned for its host; local
/// addresses allowed for that host only when the call's decision lifted Fetch's objection
/// (a rule that names the URL).
fn resolver(url: &Url, grant: &Grant) -> GuardedResolver {
    let host = url.host_str().unwrap_or_default().to_owned();
    let mut pinned = std::collections::HashMap::new();
    if let Pin::Addrs(addrs) = &grant.pin {
        pinned.insert(host.clone(), addrs.clone());
    }
    let local_ok = grant.lifted.map(|_| host).into_iter().collect();
    GuardedResolver::new(pinned, local_ok)
}

async fn fetch(url: &Url, limits: &FetchLimits, grant: &Grant) -> Result<ToolOutput, ToolError> {
    if grant.lifted.is_none()
        && let Some(why) = private_reason(url, &[])
    {
        return Err(ToolError::RespondToModel(format!(
            "{url} is not a public address ({why}); not fetched. Fetching a local address needs \
             a permission rule naming it."
        )));
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(resolver(url, grant))
        .no_proxy()
        .connect_timeout(limits.connect_timeout)
        .user_agent(concat!("cn-run/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ToolError::Fatal(format!("cannot build an HTTP client: {e}")))?;
    let response = follow(&client, url, limits).await?;
    let status = response.status();
    let final_url = response.url().clone();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let (body, capped) = read_body(response, limits, &final_url).await?;
    let text = tokio::task::spawn_blocking(move || to_text(&body, &content_type))
        .await
        .map_err(|e| ToolError::Fatal(format!("fetch conversion task failed: {e}")))??;
    let mut out = String::new();
    if &final_url != url {
        out.push_str(&format!("(redirected to {final_url})\n"));
    }
    if !status.is_success() {
        out.push_str(&format!("HTTP {status}\n"));
    }
    out.push_str(&cut(&text, limits.max_chars));
    if capped {
        out.push_str(&format!(
            "\n\n(download stopped after {} bytes; the rest of the body was not read)",
            limits.max_bytes
        ));
    }
    if text.trim().is_empty() {
        return Err(ToolError::RespondToModel(format!(
            "Could not fetch any text from {url} (HTTP {status})"
        )));
    }
    if status.is_success() {
        Ok(ToolOutput::text(out))
    } else {
        Err(ToolError::RespondToModel(out))
    }
}

/// GET `url`, following redirects by hand so each target is checked.
async fn follow(
    client: &reqwest::Client,
    url: &Url,
    limits: &FetchLimits,
) -> Result<Response, ToolError> {
    let mut chain = vec![url.clone()];
    let mut current = url.clone();
    loop {
        let response = client
            .get(current.clone())
            .send()
            .await
            .map_err(|e| request_error(&current, &e))?;
        let location = response
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok());
        let (true, Some(location)) = (response.status().is_redirection(), location) else {
            return Ok(response);
        };
        let next = current.join(location).map_err(|e| {
            ToolError::RespondToModel(format!(
                "{current} redirected to an invalid URL {location:?}: {e}"
            ))
        })?;
        if chain.contains(&next) {
            return Err(ToolError::RespondToModel(format!(
                "Redirect loop stopped: {} → {next}",
                join_chain(&chain)
            )));
        }
        if chain.len() > limits.max_redirects {
            return Err(ToolError::RespondToModel(format!(
                "Too many redirects (more than {}): {}",
                limits.max_redirects,
                join_chain(&chain)
            )));
        }
        // The name's addresses are judged by the resolver, on the one lookup it makes.
        check_redirect(url, &next, &[]).map_err(|e| ToolError::RespondToModel(e.to_string()))?;
        chain.push(next.clone());
        current = next;
    }
}

fn join_chain(chain: &[Url]) -> String {
    chain
        .iter()
        .map(Url::as_str)
        .collect::<Vec<_>>()
        .join(" → ")
}

fn request_error(url: &Url, err: &reqwest::Error) -> ToolError {
    let mut detail = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        detail.push_str(&format!(": {s}"));
        source = s.source();
    }
    if let Some(refused) = refusal(err) {
        return ToolError::RespondToModel(format!("Not fetched: {refused}"));
    }
    let what = if err.is_connect() {
        "Could not connect to"
    } else {
        "Could not fetch"
    };
    ToolError::RespondToModel(format!("{what} {url}: {detail}"))
}

/// The resolver's refusal inside a request error, if that is what stopped it.
fn refusal(err: &reqwest::Error) -> Option<String> {
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<super::fetch_dns::Refused>() {
            return Some(r.to_string());
        }
        source = s.source();
    }
    None
}

/// The body, up to `max_bytes`; `true` when it was cut there.
async fn read_body(
    mut response: Response,
    limits: &FetchLimits,
    url: &Url,
) -> Result<(Vec<u8>, bool), ToolError> {
    let mut body = Vec::new();
    loop {
        let chunk = tokio::time::timeout(limits.stall_timeout, response.chunk())
            .await
            .map_err(|_| {
                ToolError::RespondToModel(format!(
                    "Fetching {url} stalled: no data for {} s after {} bytes; stopped.",
                    limits.stall_timeout.as_secs_f64(),
                    body.len()
                ))
            })?
            .map_err(|e| request_error(url, &e))?;
        let Some(chunk) = chunk else {
            return Ok((body, false));
        };
        let room = limits.max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
}
