//! Structured output: the final answer must be JSON valid against the job's
//! `output_schema`. Only the final answer — tools stay usable during the run.

use serde_json::Value;

/// The JSON value of `answer` if it satisfies `schema`, else the problems in words.
/// A single surrounding code fence (```json … ```) is tolerated.
pub fn validate_output(schema: &Value, answer: &str) -> Result<Value, Vec<String>> {
    let text = strip_fence(answer.trim());
    let value: Value = serde_json::from_str(text)
        .map_err(|e| vec![format!("the final answer is not JSON: {e}")])?;
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| vec![format!("the output schema is invalid: {}", e.masked())])?;
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() {
                "the answer".to_owned()
            } else {
                format!("at {at}")
            };
            format!("{at}: {e}")
        })
        .collect();
    if errors.is_empty() {
        Ok(value)
    } else {
        Err(errors)
    }
}

fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.split_once('\n').map_or("", |(_, body)| body);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// The instruction added to the system message when a schema is set.
pub fn instruction(schema: &Value) -> String {
    format!(
        "Your final answer must be a single JSON value (no prose, no code fence) that is valid \
         against this JSON schema:\n{}",
        serde_json::to_string_pretty(schema).unwrap_or_default()
    )
}

/// The user message for one repair turn.
pub fn repair_message(errors: &[String]) -> String {
    let mut text = String::from(
        "Your final answer does not satisfy the required output schema. Answer again with only \
         the corrected JSON. Problems:\n",
    );
    for e in errors.iter().take(20) {
        text.push_str(&format!("- {e}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "required": ["ok", "files"], "properties": {
            "ok": {"type": "boolean"}, "files": {"type": "array", "items": {"type": "string"}}}})
    }

    #[test]
    fn accepts_valid_json_with_or_without_fence() {
        assert_eq!(
            validate_output(&schema(), r#"{"ok": true, "files": []}"#).unwrap()["ok"],
            true
        );
        let fenced = "```json\n{\"ok\": false, \"files\": [\"a\"]}\n```";
        assert_eq!(validate_output(&schema(), fenced).unwrap()["files"][0], "a");
    }

    #[test]
    fn reports_what_is_wrong() {
        let errs = validate_output(&schema(), r#"{"ok": "yes"}"#).unwrap_err();
        assert!(errs.iter().any(|e| e.contains("/ok")), "{errs:?}");
        assert!(errs.iter().any(|e| e.contains("files")), "{errs:?}");
        let errs = validate_output(&schema(), "Done!").unwrap_err();
        assert!(errs[0].contains("not JSON"));
    }
}
