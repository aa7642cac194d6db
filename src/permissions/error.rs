//! Why a policy could not be built: its own file so the pattern compiler and the vocabulary
//! (`types.rs`, which holds compiled rules) can both name it without depending on each other.

/// Why a policy could not be built or a permissions file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A rule pattern is malformed.
    #[error("invalid permission pattern `{pattern}`: {reason}")]
    InvalidPattern {
        /// The pattern text.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A rule from a given source has a malformed pattern.
    #[error("invalid permission pattern `{pattern}` in {origin}: {reason}")]
    InvalidRule {
        /// The pattern text.
        pattern: String,
        /// Where it was written (command line, job file, a file path).
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `permissions.yaml` does not have the expected shape.
    #[error("permissions file is not applied: {0}")]
    File(String),
}
