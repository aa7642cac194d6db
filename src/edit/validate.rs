//! Validation of raw Edit / MultiEdit tool arguments into [`EditSpec`]s.
//!
//! The arguments arrive as JSON from the model, so anything can be missing or of the wrong
//! type. The rules are Continue's: `old_string` and `new_string` must be strings and must
//! differ; `replace_all` may be absent or a boolean (an explicit `null` is rejected);
//! MultiEdit needs a non-empty `edits` array, and only its first edit may have an empty
//! `old_string` (meaning "insert at the top of the file"). We also count a whitespace-only
//! `old_string` as empty there, since it would insert at the top of the file as well.

use serde_json::Value;

use super::error::{edit_prefix, reason};
use super::text::is_blank;
use super::{EditError, EditSpec};

/// Validates `{old_string, new_string, replace_all?}` for the Edit tool.
pub fn validate_single_edit(args: &Value) -> Result<EditSpec, EditError> {
    validate_edit(args, None)
}

/// Validates `{edits: [{old_string, new_string, replace_all?}, ...]}` for MultiEdit.
pub fn validate_multi_edit(args: &Value) -> Result<Vec<EditSpec>, EditError> {
    let Some(edits) = args.get("edits").and_then(Value::as_array) else {
        return Err(EditError::new(
            reason::EDITS_ARRAY_REQUIRED,
            "edits must be an array of {old_string, new_string, replace_all} objects",
        ));
    };
    if edits.is_empty() {
        return Err(EditError::new(
            reason::EDITS_ARRAY_EMPTY,
            "edits must contain at least one edit",
        ));
    }
    let mut specs = Vec::with_capacity(edits.len());
    for (i, edit) in edits.iter().enumerate() {
        let spec = validate_edit(edit, Some(i))?;
        if i > 0 && is_blank(&spec.old_string) {
            let message = format!(
                "{}old_string is empty. Only the first edit may have an empty old_string \
                 (it inserts new_string at the top of the file); give this edit the text \
                 it should replace.",
                edit_prefix(Some(i)),
            );
            return Err(EditError::new(reason::NON_FIRST_EMPTY_OLD_STRING, message));
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// Validates one edit object; `index` is its position in a MultiEdit batch.
fn validate_edit(args: &Value, index: Option<usize>) -> Result<EditSpec, EditError> {
    let fail = |reason, what: &str| EditError::new(reason, format!("{}{what}", edit_prefix(index)));
    let Some(old_string) = args.get("old_string").and_then(Value::as_str) else {
        return Err(fail(
            reason::MISSING_OLD_STRING,
            "old_string is required and must be a string",
        ));
    };
    let Some(new_string) = args.get("new_string").and_then(Value::as_str) else {
        return Err(fail(
            reason::MISSING_NEW_STRING,
            "new_string is required and must be a string",
        ));
    };
    if old_string == new_string {
        return Err(fail(
            reason::IDENTICAL_STRINGS,
            "old_string and new_string are identical, so the edit would change nothing",
        ));
    }
    let replace_all = match args.get("replace_all") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            let got = json_type(other);
            return Err(fail(
                reason::INVALID_REPLACE_ALL,
                &format!("replace_all must be true or false, not {got}"),
            ));
        }
    };
    Ok(EditSpec {
        old_string: old_string.to_owned(),
        new_string: new_string.to_owned(),
        replace_all,
    })
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn batch_errors_name_the_failing_edit() {
        let args = json!({"edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c"}]});
        let err = validate_multi_edit(&args).unwrap_err();
        assert_eq!(err.reason, reason::MISSING_NEW_STRING);
        assert!(err.message.starts_with("edits[1]: "), "{err}");
    }

    #[test]
    fn whitespace_only_old_string_is_empty_after_the_first_edit() {
        let args = json!({"edits": [{"old_string": "a", "new_string": "b"},
                                     {"old_string": " \n", "new_string": "x"}]});
        let err = validate_multi_edit(&args).unwrap_err();
        assert_eq!(err.reason, reason::NON_FIRST_EMPTY_OLD_STRING);
    }
}
