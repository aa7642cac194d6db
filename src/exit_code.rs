//! The one table that maps how a run ended to its process exit code (PRODUCT.md).
//!
//! result.json mirrors it: `status`, `subtype` and `exit_code` all come from here.

use serde::{Deserialize, Serialize};

/// How a run ended, coarse enough to pick an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The agent finished and every check passed.
    Success,
    /// The agent reported failure, or checks still fail after retries.
    Failed,
    /// The job file or the command line is wrong; nothing ran.
    Invalid,
    /// A tool call needed approval and `on_ask: fail`.
    ApprovalRequired,
    /// A limit was reached: turns, time, cost or tokens.
    LimitReached,
    /// The model provider failed after retries.
    ProviderError,
    /// An internal or environment error (git, disk, MCP server).
    InternalError,
    /// SIGINT or SIGTERM.
    Interrupted,
}

impl Status {
    pub fn exit_code(self) -> i32 {
        match self {
            Status::Success => 0,
            Status::Failed => 1,
            Status::Invalid => 2,
            Status::ApprovalRequired => 3,
            Status::LimitReached => 4,
            Status::ProviderError => 5,
            Status::InternalError => 6,
            Status::Interrupted => 130,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::Failed => "failed",
            Status::Invalid => "invalid",
            Status::ApprovalRequired => "approval_required",
            Status::LimitReached => "limit_reached",
            Status::ProviderError => "provider_error",
            Status::InternalError => "internal_error",
            Status::Interrupted => "interrupted",
        }
    }

    /// How bad an outcome is, to combine several jobs into one exit code: the worst wins.
    pub fn severity(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::Failed => 1,
            Status::LimitReached => 2,
            Status::ApprovalRequired => 3,
            Status::ProviderError => 4,
            Status::InternalError => 5,
            Status::Invalid => 6,
            Status::Interrupted => 7,
        }
    }
}

/// Which limit stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    MaxTurns,
    Timeout,
    MaxCost,
    MaxTokens,
}

impl Limit {
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::MaxTurns => "max_turns",
            Limit::Timeout => "timeout",
            Limit::MaxCost => "max_cost_usd",
            Limit::MaxTokens => "max_tokens",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn codes_follow_the_product_table() {
        let table = [
            (Status::Success, 0),
            (Status::Failed, 1),
            (Status::Invalid, 2),
            (Status::ApprovalRequired, 3),
            (Status::LimitReached, 4),
            (Status::ProviderError, 5),
            (Status::InternalError, 6),
            (Status::Interrupted, 130),
        ];
        for (status, code) in table {
            assert_eq!(status.exit_code(), code, "{status:?}");
        }
    }
}
