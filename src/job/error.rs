//! Problems with a job file, each with file, line, column and field path.

use std::fmt;

/// One problem in a job file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// Dotted field path, e.g. `permissions.allow[2]`; empty for the document itself.
    pub field: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// Why a job could not be loaded. Messages never contain values of secrets: problems name
/// fields and positions, not what was written there.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("cannot read job file {path}: {message}")]
    Read { path: String, message: String },
    #[error("{}", list(.0))]
    Invalid(Vec<Problem>),
    #[error("{0}")]
    Usage(String),
}

/// Why a duration or a size, in a job or a flag, cannot be read (the caller locates it:
/// `limits.timeout`, `--stop-timeout`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("`{0}` is not a duration (examples: 90s, 15m, 1h30m)")]
    NotADuration(String),
    #[error("`{0}` is negative")]
    Negative(String),
    #[error("{0:?} is not a size (say 10MB, 512KiB or a number of bytes)")]
    NotASize(String),
    #[error("{text:?}: unknown size unit {unit:?} (use KB, MB or GB)")]
    SizeUnit { text: String, unit: String },
    #[error("{0:?} is too large")]
    TooLarge(String),
}

/// Problems in the order a reader meets them in the file: by line, then column.
pub(crate) fn sorted(mut problems: Vec<Problem>) -> Vec<Problem> {
    problems.sort_by_key(|p| (p.line, p.column));
    problems
}

fn list(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl JobError {
    pub fn problems(&self) -> &[Problem] {
        match self {
            JobError::Invalid(p) => p,
            _ => &[],
        }
    }
}
