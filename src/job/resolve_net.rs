//! The job's connections to the outside: MCP servers (a command or a URL each) and the
//! upload of session snapshots. Split from `resolve` to keep it readable; problems go
//! into the same located list.

use std::time::Duration;

use super::file::JobFile;
use super::resolve::Ctx;
use super::{McpServerSpec, UploadSpec};

pub(super) fn mcp_servers(cx: &mut Ctx<'_>, raw: &JobFile) -> Vec<McpServerSpec> {
    let mut out = Vec::new();
    for (name, s) in &raw.mcp_servers {
        let field = format!("mcp_servers.{name}");
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            let pos = cx.loc.key(&field);
            cx.push_at(
                pos,
                &field,
                "server names may use letters, digits, `_` and `-`".to_owned(),
            );
        }
        match (&s.command, &s.url) {
            (Some(_), Some(_)) | (None, None) => cx.push(
                &field,
                "give either `command` (stdio) or `url` (streamable HTTP)".to_owned(),
            ),
            (None, Some(u)) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                cx.push(
                    &format!("{field}.url"),
                    "must be an http:// or https:// URL".to_owned(),
                );
            }
            _ => {}
        }
        out.push(McpServerSpec {
            name: name.clone(),
            command: s.command.clone(),
            args: s.args.clone(),
            env: s.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            url: s.url.clone(),
            headers: s
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            optional: s.optional,
            startup_timeout: cx.duration(
                &format!("{field}.startup_timeout"),
                s.startup_timeout.as_ref(),
            ),
            call_timeout: cx.duration(&format!("{field}.call_timeout"), s.call_timeout.as_ref()),
        });
    }
    out
}

pub(super) fn upload(cx: &mut Ctx<'_>, raw: &JobFile) -> Option<UploadSpec> {
    let u = raw.upload.as_ref()?;
    if u.url.is_none() && u.url_env.is_none() {
        cx.push("upload", "give `url_env` (or `url`)".to_owned());
    }
    let interval = cx
        .duration("upload.interval", u.interval.as_ref())
        .unwrap_or(Duration::from_secs(30));
    if interval < Duration::from_secs(1) {
        cx.push("upload.interval", "must be at least 1s".to_owned());
    }
    Some(UploadSpec {
        url: u.url.clone(),
        url_env: u.url_env.clone(),
        diff_url: u.diff_url.clone(),
        diff_url_env: u.diff_url_env.clone(),
        artifacts_url: u.artifacts_url.clone(),
        artifacts_url_env: u.artifacts_url_env.clone(),
        interval,
    })
}

/// `tools.bash.network`: `true`/`false`; a host list is `false` plus the hosts.
pub(super) fn bash_network(raw: Option<&super::file::BashNetwork>) -> Option<bool> {
    match raw? {
        super::file::BashNetwork::Allowed(allowed) => Some(*allowed),
        super::file::BashNetwork::Hosts(_) => Some(false),
    }
}

/// The hosts of `tools.bash.network: [hosts]`, each one checked.
pub(super) fn bash_network_hosts(
    cx: &mut Ctx<'_>,
    raw: Option<&super::file::BashNetwork>,
) -> Vec<crate::sandbox::HostRule> {
    let Some(super::file::BashNetwork::Hosts(hosts)) = raw else {
        return Vec::new();
    };
    if hosts.is_empty() {
        cx.push(
            "tools.bash.network",
            "an empty list of hosts: write `network: false` for no network".to_owned(),
        );
    }
    let mut rules = Vec::new();
    for (i, host) in hosts.iter().enumerate() {
        match crate::sandbox::HostRule::parse(host) {
            Ok(rule) => rules.push(rule),
            Err(why) => cx.push(&format!("tools.bash.network[{i}]"), why.to_string()),
        }
    }
    rules
}
