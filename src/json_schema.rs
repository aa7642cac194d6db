//! The one way cn-run generates its JSON Schemas (job, result, event): schemars' draft
//! 2020-12 output with Rust's numeric formats (`uint32`, `double`, …) turned into what
//! every validator understands: ranges as `minimum`/`maximum`, no `format` at all. ajv in
//! strict mode, check-jsonschema and yaml-language-server refuse or warn on the others.

use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema, generate::SchemaSettings};
use serde_json::Value;

/// The formats JSON Schema 2020-12 defines; no generated schema uses any other.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The schema of `T`, with standard formats only.
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with_transform(RecursiveTransform(standard_formats as fn(&mut Schema)))
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or(Value::Null)
}

/// The range a Rust integer format stands for (`None`: no bound on that side).
fn range(format: &str) -> Option<(Option<i64>, Option<u64>)> {
    Some(match format {
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "uint64" | "uint" => (Some(0), None),
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX as u64)),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX as u64)),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX as u64)),
        "int64" | "int" | "float" | "double" => (None, None),
        _ => return None,
    })
}

/// Replaces a non-standard numeric `format` with the bounds it means, keeping any
/// tighter bound already there.
fn standard_formats(schema: &mut Schema) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let Some((min, max)) = obj.get("format").and_then(Value::as_str).and_then(range) else {
        return;
    };
    obj.remove("format");
    if let Some(min) = min {
        let keep = obj
            .get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|m| m >= min as f64);
        if !keep {
            obj.insert("minimum".into(), min.into());
        }
    }
    if let Some(max) = max {
        let keep = obj
            .get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|m| m <= max as f64);
        if !keep {
            obj.insert("maximum".into(), max.into());
        }
    }
}
