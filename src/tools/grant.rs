//! What the permission check of one call judged, handed to the call when it runs, so the
//! tool uses exactly what was judged and nothing the model changed in between.
//!
//! A tool judges its arguments once ([`super::Tool::judge`]): the real path a file tool
//! resolved, the addresses Fetch looked up. If the policy allowed the call although the
//! tool objected (`tool.outside_workspace` lifted by `Write(/tmp/out/**)`), the objection
//! is *lifted* for that judged subject only: at run time the tool judges again, and a path
//! or address that differs from the pinned one gets no benefit from the rule.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use crate::permissions::{Permission, Tighten};

/// What the check judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Pin {
    #[default]
    None,
    /// The real path (symlinks resolved) a file tool judged.
    Path(PathBuf),
    /// The addresses a host name resolved to when Fetch judged it (none for an IP literal).
    Addrs(Vec<IpAddr>),
}

/// A tool's judgement of its arguments: its tightening and what it was made on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    pub tighten: Option<Tighten>,
    pub pin: Pin,
}

/// What a call may do beyond the tool's own objections: set by the dispatcher from the
/// judgement and the decision; the default (a tool run directly) lifts nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    pub pin: Pin,
    /// The rule of the tool's objection that the decision lifted, if one was.
    pub lifted: Option<&'static str>,
}

impl Grant {
    /// The grant of an allowed call: the tool's "ask" objection, if it had one, is lifted.
    pub fn of_allowed(judged: Judged) -> Grant {
        let lifted = judged
            .tighten
            .filter(|t| t.permission == Permission::Ask)
            .map(|t| t.rule);
        Grant {
            pin: judged.pin,
            lifted,
        }
    }

    /// Whether objection `rule` on `path` was lifted by the call's decision.
    pub fn lifts_path(&self, rule: &str, path: &Path) -> bool {
        self.lifted == Some(rule) && self.pin == Pin::Path(path.to_path_buf())
    }

    /// Whether objection `rule` was lifted (for the subject pinned).
    pub fn lifts(&self, rule: &str) -> bool {
        self.lifted == Some(rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_ask_on_the_pinned_path_is_lifted() {
        let judged = Judged {
            tighten: Some(Tighten {
                permission: Permission::Ask,
                rule: "tool.outside_workspace",
                reason: String::new(),
            }),
            pin: Pin::Path(PathBuf::from("/tmp/out/a")),
        };
        let grant = Grant::of_allowed(judged);
        assert!(grant.lifts_path("tool.outside_workspace", Path::new("/tmp/out/a")));
        assert!(!grant.lifts_path("tool.outside_workspace", Path::new("/root/.ssh/a")));
        assert!(!grant.lifts_path("tool.git_internals", Path::new("/tmp/out/a")));
        assert!(!Grant::default().lifts("tool.outside_workspace"));
    }
}
