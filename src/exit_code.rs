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

    /// The README's exit-code table: (code, meaning) for each row.
    fn readme_table() -> Vec<(i32, String)> {
        let readme = include_str!("../README.md");
        let section = readme
            .split("### Exit codes")
            .nth(1)
            .expect("README has an exit-code section");
        section
            .lines()
            .skip_while(|l| !l.starts_with("| code"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (
                    cells[1].parse().expect("a numeric code"),
                    cells[2].to_owned(),
                )
            })
            .collect()
    }

    /// Every variant of `Status`, read from its own schema (so a new variant is walked too).
    fn every_status() -> Vec<Status> {
        let schema = crate::json_schema::schema_for::<Status>();
        let names = schema["enum"]
            .as_array()
            .or_else(|| schema["oneOf"].as_array())
            .expect("Status is a plain enum")
            .clone();
        names
            .iter()
            .map(|n| {
                let n = n.get("const").unwrap_or(n);
                serde_json::from_value(n.clone()).expect("a Status name")
            })
            .collect()
    }

    /// What a row of the README says, in words each status must be described by.
    fn words(status: Status) -> &'static str {
        match status {
            Status::Success => "every check passed",
            Status::Failed => "the task failed",
            Status::Invalid => "the job file or the command line is wrong",
            Status::ApprovalRequired => "needed approval",
            Status::LimitReached => "a limit was reached",
            Status::ProviderError => "the model provider failed",
            Status::InternalError => "an internal or environment error",
            Status::Interrupted => "interrupted",
        }
    }

    #[test]
    fn every_status_has_the_code_of_its_readme_row() {
        let table = readme_table();
        let statuses = every_status();
        assert_eq!(statuses.len(), 8, "{statuses:?}");
        for status in &statuses {
            let code = status.exit_code();
            let row = table.iter().find(|(c, _)| *c == code);
            let (_, meaning) = row.unwrap_or_else(|| panic!("{status:?}: no README row {code}"));
            assert!(
                meaning.contains(words(*status)),
                "{status:?} → {code}: {meaning}"
            );
        }
        for (code, meaning) in &table {
            assert!(
                statuses.iter().any(|s| s.exit_code() == *code),
                "README row {code} ({meaning}) has no status"
            );
        }
    }
}
