//! The one error type of the edit engine, plus the reason identifiers it carries.
//!
//! Continue tags every edit failure with a stable `reason` string; tools, tests and users
//! match on it, so we keep Continue's identifiers verbatim while the human-readable
//! message is written in our own words.

/// Why an edit could not be validated or applied. `Display` prints the message; `reason`
/// is one of the identifiers in [`reason`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EditError {
    /// Continue's machine-readable reason, e.g. `find_and_replace_old_string_not_found`.
    pub reason: &'static str,
    /// What went wrong and how the model can fix it.
    pub message: String,
}

impl EditError {
    pub(crate) fn new(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

/// Continue's reason identifiers (`ContinueErrorReason` values), verbatim.
pub mod reason {
    /// `old_string` matched nothing, under any strategy.
    pub const OLD_STRING_NOT_FOUND: &str = "find_and_replace_old_string_not_found";
    /// `old_string` matched more than once and `replace_all` was not set.
    pub const MULTIPLE_OCCURRENCES: &str = "find_and_replace_multiple_occurrences";
    /// `old_string` is absent or not a string.
    pub const MISSING_OLD_STRING: &str = "find_and_replace_missing_old_string";
    /// `new_string` is absent or not a string.
    pub const MISSING_NEW_STRING: &str = "find_and_replace_missing_new_string";
    /// `old_string` and `new_string` are equal, so the edit would do nothing.
    pub const IDENTICAL_STRINGS: &str = "find_and_replace_identical_old_and_new_strings";
    /// `replace_all` is present but not a boolean (`null` included).
    pub const INVALID_REPLACE_ALL: &str = "find_and_replace_invalid_replace_all";
    /// A MultiEdit edit other than the first has an empty `old_string`.
    pub const NON_FIRST_EMPTY_OLD_STRING: &str = "find_and_replace_non_first_empty_old_string";
    /// MultiEdit's `edits` is absent or not an array.
    pub const EDITS_ARRAY_REQUIRED: &str = "multi_edit_edits_array_required";
    /// MultiEdit's `edits` is an empty array.
    pub const EDITS_ARRAY_EMPTY: &str = "multi_edit_edits_array_empty";
}

/// `old` shortened for an error message: long snippets would only repeat what the model
/// just sent, so keep the first 200 characters and say how much was cut.
pub(crate) fn preview(old: &str) -> String {
    const MAX_CHARS: usize = 200;
    match old.char_indices().nth(MAX_CHARS) {
        None => old.to_owned(),
        Some((cut, _)) => {
            let rest = old[cut..].chars().count();
            format!("{}… ({rest} more characters)", &old[..cut])
        }
    }
}

/// The prefix naming which edit of a batch failed, e.g. `edits[2]: `.
pub(crate) fn edit_prefix(index: Option<usize>) -> String {
    index.map_or_else(String::new, |i| format!("edits[{i}]: "))
}
