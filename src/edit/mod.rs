//! The edit engine behind the Edit and MultiEdit tools: find `old_string` in a file and
//! replace it with `new_string`, without touching the disk.
//!
//! Models often quote the old text from memory, so an exact search alone makes edits
//! brittle. Like Continue's `cn`, the search is graded: exact → trimmed → case-insensitive
//! → whitespace-ignored. The first strategy that finds anything wins, and every match
//! carries the strategy's name so the tool result can say how loosely it matched. All
//! offsets here are byte offsets into the `&str` that was searched (always char
//! boundaries); [`byte_to_utf16`] converts them to the UTF-16 units JavaScript uses.
//!
//! Deliberate differences from Continue (listed in the report and in the tests):
//! - [`find_matches`] picks one strategy for the whole file (the first that finds
//!   anything) and returns every non-overlapping match of that strategy. Continue re-runs
//!   the whole cascade on the text after each match, so an exact hit followed by a
//!   case-insensitive one counted as "2 occurrences".
//! - Case-insensitive matches map back exactly even where lowercasing changes the length
//!   (the rule is documented in `fold.rs`); Continue reused the lowercased offsets, which
//!   can be off by a few units after characters such as `İ`.
//! - Error messages are our own words; the `reason` identifiers are Continue's.

mod diff;
mod error;
mod find;
mod fold;
mod replace;
mod strip;
mod text;
mod validate;

pub use diff::unified_diff;
pub use error::{EditError, reason};
pub use find::{find_match, find_matches};
pub use replace::{EditSpec, Replaced, apply_edits, find_and_replace};
pub use text::{byte_to_utf16, trim_empty_lines, utf16_len, utf16_to_byte};
pub use validate::{validate_multi_edit, validate_single_edit};

/// Which matching strategy located an edit. Serialized with Continue's `strategyName`
/// spelling (`"exactMatch"`, `"whitespaceIgnoredMatch"`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Strategy {
    /// The search text was empty or only whitespace: it "matches" at offset 0, so the
    /// replacement is inserted at the top of the file.
    EmptySearch,
    /// The search text occurs verbatim.
    ExactMatch,
    /// The search text occurs once leading and trailing whitespace is removed from it.
    TrimmedMatch,
    /// The search text occurs when both sides are lowercased.
    CaseInsensitiveMatch,
    /// The search text occurs when every whitespace character is removed from both sides.
    WhitespaceIgnoredMatch,
}

impl Strategy {
    /// Continue's name for the strategy, e.g. `"trimmedMatch"`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::EmptySearch => "emptySearch",
            Strategy::ExactMatch => "exactMatch",
            Strategy::TrimmedMatch => "trimmedMatch",
            Strategy::CaseInsensitiveMatch => "caseInsensitiveMatch",
            Strategy::WhitespaceIgnoredMatch => "whitespaceIgnoredMatch",
        }
    }

    /// Whether the replacement text is re-indented to fit the matched lines. Only the
    /// loose strategies do this; an exact match is trusted as written.
    pub(crate) fn reindents(self) -> bool {
        !matches!(self, Strategy::EmptySearch | Strategy::ExactMatch)
    }
}

/// One match: `content[start..end]` is the matched text (byte offsets, char boundaries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// Byte offset of the first matched byte.
    pub start: usize,
    /// Byte offset just past the last matched byte.
    pub end: usize,
    /// The strategy that found it.
    pub strategy: Strategy,
}
