//! The rest of a job file once what the schema refused is taken out, so `validate` (and
//! a run) can report every problem in one pass: the schema's, and those that resolving
//! the rest finds (a template naming an undeclared parameter, a duration that does not
//! parse, a rule file that is not there). A problem the schema found is never reported
//! twice: what resolving says of a pruned field is left out.

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::schema_msg::dotted;

/// Where the schema refused something: the JSON pointers to take out. None when the
/// refusal is of something missing or of the file as a whole (nothing can be taken out).
pub(super) fn refused<'a>(
    errors: impl IntoIterator<Item = &'a ValidationError<'a>>,
) -> Option<Vec<String>> {
    let mut pointers = Vec::new();
    for err in errors {
        let at = err.instance_path().as_str().to_owned();
        match err.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                pointers.extend(
                    unexpected
                        .iter()
                        .map(|name| format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"))),
                );
            }
            ValidationErrorKind::Required { .. } => return None,
            _ if at.is_empty() => return None,
            _ => pointers.push(at),
        }
    }
    Some(pointers)
}

/// `root` without what `pointers` name, and those places as dotted fields. A parameter's
/// own spec is emptied rather than removed, so templates that name it still find it.
pub(super) fn prune(root: &Value, mut pointers: Vec<String>) -> (Value, Vec<String>) {
    let fields = pointers.iter().map(|p| dotted(p, root)).collect();
    // Deepest and last first, so removing one never moves another.
    pointers.sort_by(|a, b| b.cmp(a));
    pointers.dedup();
    let mut value = root.clone();
    for pointer in &pointers {
        let Some((parent, last)) = pointer.rsplit_once('/') else {
            continue;
        };
        let key = last.replace("~1", "/").replace("~0", "~");
        match value.pointer_mut(parent) {
            Some(Value::Object(map)) if parent == "/params" => {
                map.insert(key, Value::Object(serde_json::Map::new()));
            }
            Some(Value::Object(map)) => {
                map.remove(&key);
            }
            Some(Value::Array(items)) => {
                if let Ok(i) = key.parse::<usize>()
                    && i < items.len()
                {
                    items.remove(i);
                }
            }
            _ => {}
        }
    }
    (value, fields)
}

/// Whether `field` is a pruned field or inside one.
pub(super) fn inside(field: &str, pruned: &[String]) -> bool {
    pruned.iter().any(|p| {
        field == p
            || field
                .strip_prefix(p.as_str())
                .is_some_and(|rest| rest.starts_with(['.', '[']))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_out_the_refused_places_and_empties_a_parameter() {
        let root = serde_json::json!({
            "limits": {"max_turns": "lots", "timeout": "1h"},
            "params": {"path": 3},
            "rules": ["a", 5, "c", 7],
            "colour": "red"
        });
        let (value, fields) = prune(
            &root,
            vec![
                "/limits/max_turns".into(),
                "/params/path".into(),
                "/rules/1".into(),
                "/rules/3".into(),
                "/colour".into(),
            ],
        );
        assert_eq!(
            value,
            serde_json::json!({"limits": {"timeout": "1h"}, "params": {"path": {}}, "rules": ["a", "c"]})
        );
        assert_eq!(
            fields,
            [
                "limits.max_turns",
                "params.path",
                "rules[1]",
                "rules[3]",
                "colour"
            ]
        );
        assert!(inside("params.path", &fields) && inside("rules[1]", &fields));
        assert!(inside("limits.max_turns.x", &fields) && !inside("limits.max_turns_x", &fields));
    }
}
