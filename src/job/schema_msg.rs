//! Schema errors in words a job author understands: "expected an integer, got the string
//! \"ten\"", "must be one of: deny, fail, allow", "unknown field `permisions`; did you mean
//! `permissions`?". The validator's own messages name JSON-schema keywords and echo whole
//! values; these name YAML shapes and never print a value that may be a secret.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

use super::error::Problem;
use super::load::problem;
use super::locate::Locator;
use super::suggest::did_you_mean;

/// What a problem is reported against: the file, its parsed value and the job schema.
pub(super) struct Source<'a> {
    pub label: &'a str,
    pub root: &'a Value,
    pub schema: &'a Value,
    pub loc: &'a Locator,
}

impl Source<'_> {
    fn at(&self, field: &str, message: String) -> Problem {
        problem(self.label, self.loc.value(field), field, message)
    }
}

/// The problems one validator error stands for (an unknown-field error names several).
pub(super) fn schema_problems(err: &ValidationError<'_>, src: &Source<'_>) -> Vec<Problem> {
    let parent = dotted(err.instance_path().as_str(), src.root);
    match err.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let known = known_properties(src.schema, err.schema_path().as_str());
            unexpected
                .iter()
                .map(|name| {
                    let field = join(&parent, name);
                    let hint = did_you_mean(name, known.iter().map(String::as_str));
                    let message = format!("unknown field `{name}`{hint}");
                    problem(src.label, src.loc.key(&field), &field, message)
                })
                .collect()
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or("?");
            let field = join(&parent, name);
            let pos = src.loc.value(&parent);
            vec![problem(
                src.label,
                pos,
                &field,
                "missing required field".into(),
            )]
        }
        ValidationErrorKind::Type { kind } => {
            let expected = expected(&types_of(kind));
            let got = got(err.instance(), &parent);
            vec![src.at(&parent, format!("expected {expected}, got {got}"))]
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            alternatives(err, context, src, &parent)
        }
        ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. } => {
            match allowed_values(std::slice::from_ref(err), err.instance_path().as_str()) {
                Some(values) => vec![src.at(&parent, one_of(&values))],
                None => vec![src.at(&parent, err.masked().to_string())],
            }
        }
        ValidationErrorKind::Minimum { limit } => {
            vec![src.at(&parent, format!("must be at least {limit}"))]
        }
        ValidationErrorKind::Maximum { limit } => {
            // The bound of an unsigned field (json_schema.rs turns u8/u16/u32 into it).
            let whole = [255, 65535, 4294967295].contains(&limit.as_u64().unwrap_or(0));
            let message = if whole {
                format!("must be a whole number from 0 to {limit}")
            } else {
                format!("must be at most {limit}")
            };
            vec![src.at(&parent, message)]
        }
        _ => vec![src.at(&parent, err.masked().to_string())],
    }
}

/// A value that matched none of several schemas: the allowed words if the schemas are a
/// finite set of them; else the errors of the one branch whose shape the value has; else
/// the shapes that would be accepted.
fn alternatives(
    err: &ValidationError<'_>,
    context: &[Vec<ValidationError<'static>>],
    src: &Source<'_>,
    parent: &str,
) -> Vec<Problem> {
    let here = err.instance_path().as_str();
    if let Some(values) = allowed_branch_values(context, here) {
        return vec![src.at(parent, one_of(&values))];
    }
    // A value that is not null never meant the "absent" branch of an optional field.
    let branches: Vec<&Vec<ValidationError<'static>>> = context
        .iter()
        .filter(|b| !b.iter().all(|e| is_null_type_error(e, here)))
        .collect();
    let same_shape: Vec<_> = branches
        .iter()
        .filter(|b| !b.iter().any(|e| is_type_error_at(e, here)))
        .collect();
    if let [only] = same_shape.as_slice() {
        return only.iter().flat_map(|e| schema_problems(e, src)).collect();
    }
    if same_shape.is_empty() && !branches.is_empty() {
        let mut types = Vec::new();
        for e in branches.iter().flat_map(|b| b.iter()) {
            if let ValidationErrorKind::Type { kind } = e.kind()
                && e.instance_path().as_str() == here
            {
                types.extend(types_of(kind));
            }
        }
        let got = got(err.instance(), parent);
        return vec![src.at(parent, format!("expected {}, got {got}", expected(&types)))];
    }
    vec![src.at(parent, "value has none of the allowed forms".to_owned())]
}

fn one_of(values: &[String]) -> String {
    format!("must be one of: {}", values.join(", "))
}

fn is_type_error_at(e: &ValidationError<'_>, here: &str) -> bool {
    matches!(e.kind(), ValidationErrorKind::Type { .. }) && e.instance_path().as_str() == here
}

fn is_null_type_error(e: &ValidationError<'_>, here: &str) -> bool {
    is_type_error_at(e, here)
        && matches!(
            e.kind(),
            ValidationErrorKind::Type {
                kind: TypeKind::Single(JsonType::Null)
            }
        )
}

/// The words the branches allow, when every branch is a `const` or `enum` of strings (a
/// branch that only rejects a non-null value as "not null" adds nothing).
fn allowed_branch_values(context: &[Vec<ValidationError<'_>>], here: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for branch in context {
        if branch.iter().all(|e| is_null_type_error(e, here)) {
            continue;
        }
        for v in allowed_values(branch, here)? {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The words one branch's errors allow; `None` if it accepts something that is not a word
/// from a finite list. Type errors beside a `const` or `enum` (a number where a word was
/// expected) add nothing.
fn allowed_values(errors: &[ValidationError<'_>], here: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for e in errors {
        if e.instance_path().as_str() != here {
            return None;
        }
        match e.kind() {
            ValidationErrorKind::Constant { expected_value } => {
                out.push(expected_value.as_str()?.to_owned());
            }
            ValidationErrorKind::Enum { options } => {
                for o in options.as_array()? {
                    out.push(o.as_str()?.to_owned());
                }
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                out.extend(allowed_branch_values(context, here)?);
            }
            ValidationErrorKind::Type { .. } => {}
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

fn types_of(kind: &TypeKind) -> Vec<JsonType> {
    match kind {
        TypeKind::Single(t) => vec![*t],
        TypeKind::Multiple(set) => set.iter().collect(),
    }
}

/// "an integer", "a string or a mapping": the accepted shapes, null left out (every
/// optional field accepts it, and nobody writes `null` on purpose to fix a wrong value).
fn expected(types: &[JsonType]) -> String {
    let has_number = types.contains(&JsonType::Number);
    let mut names: Vec<&str> = Vec::new();
    for t in types {
        let name = match t {
            JsonType::Null => continue,
            JsonType::Integer if has_number => continue,
            JsonType::Boolean => "a boolean",
            JsonType::Integer => "an integer",
            JsonType::Number => "a number",
            JsonType::String => "a string",
            JsonType::Array => "a list",
            JsonType::Object => "a mapping",
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.as_slice() {
        [] => "nothing (null)".to_owned(),
        ["a boolean"] => "true or false".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// What was written, shown only when it cannot be a secret: numbers and booleans, and short
/// strings without digits outside fields that carry credentials (headers, env, URLs).
fn got(value: &Value, field: &str) -> String {
    match value {
        Value::Null => "nothing (null)".to_owned(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Number(n) if n.is_i64() || n.is_u64() => format!("the integer {n}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if shows_safely(s, field) => format!("the string {s:?}"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping".to_owned(),
    }
}

fn shows_safely(s: &str, field: &str) -> bool {
    const CREDENTIAL_FIELDS: [&str; 5] = ["headers", "env", "url", "key", "token"];
    let sensitive = field
        .split(['.', '['])
        .any(|seg| CREDENTIAL_FIELDS.iter().any(|c| seg.contains(c)));
    let numeric = s.trim().parse::<f64>().is_ok();
    !sensitive && (numeric || (s.chars().count() <= 16 && !s.chars().any(|c| c.is_ascii_digit())))
}

/// The property names the object schema at `keyword` (a pointer to its
/// `additionalProperties`) declares.
fn known_properties(schema: &Value, keyword: &str) -> Vec<String> {
    let object = keyword
        .rsplit_once('/')
        .and_then(|(parent, _)| schema.pointer(parent));
    object
        .and_then(|o| o.get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

/// A JSON pointer (`/permissions/allow/2`) as a dotted field path (`permissions.allow[2]`).
pub(super) fn dotted(pointer: &str, root: &Value) -> String {
    let mut out = String::new();
    let mut cur = Some(root);
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        match cur {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{seg}]"));
                cur = seg.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            other => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&seg);
                cur = other.and_then(|v| v.get(&seg));
            }
        }
    }
    out
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{JobError, LoadOptions, load_str};

    const MODEL: &str = "model: {provider: openai, name: m}\nprompt: hi\n";

    fn messages(extra: &str) -> Vec<String> {
        let text = format!("{MODEL}{extra}");
        match load_str(&text, "job.yaml", None, &LoadOptions::default()) {
            Err(JobError::Invalid(p)) => p.iter().map(ToString::to_string).collect(),
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn expected_shapes_read_as_english() {
        use JsonType::*;
        assert_eq!(expected(&[Integer, Null]), "an integer");
        assert_eq!(expected(&[Boolean]), "true or false");
        assert_eq!(expected(&[String, Object]), "a string or a mapping");
        assert_eq!(
            expected(&[String, Integer, Number, Boolean]),
            "a string, a number or a boolean"
        );
    }

    #[test]
    fn values_that_may_be_secrets_are_not_shown() {
        let s = |v: &str| Value::String(v.to_owned());
        assert_eq!(got(&s("ten"), "limits.max_turns"), "the string \"ten\"");
        assert_eq!(got(&s("12"), "limits.max_turns"), "the string \"12\"");
        assert_eq!(got(&s("sk-live-abc123"), "model.max_tokens"), "a string");
        assert_eq!(got(&s("a long sentence of words"), "limits"), "a string");
        assert_eq!(got(&s("Bearer"), "model.headers"), "a string");
        assert_eq!(got(&Value::from(3), "x"), "the integer 3");
    }

    #[test]
    fn an_object_branch_reports_its_own_problems() {
        let m = messages("workspace: {pth: x}\n");
        assert_eq!(
            m,
            [
                "job.yaml:3:12: workspace.path: missing required field",
                "job.yaml:3:13: workspace.pth: unknown field `pth`; did you mean `path`?",
            ]
        );
    }

    #[test]
    fn enums_behind_optional_fields_list_their_words() {
        assert_eq!(
            messages("tools: {bash: {sandbox: 3}}\n"),
            ["job.yaml:3:25: tools.bash.sandbox: must be one of: off, workspace-write, read-only"]
        );
        assert_eq!(
            messages("limits: {timeout: -3}\n"),
            ["job.yaml:3:19: limits.timeout: must be at least 0"]
        );
    }
}
