//! A tool's parameter schema from its argument struct: schemars' schema reduced to the
//! small shape models are offered (`type`, `description`, `required`, `properties`,
//! `items`, in that order), nested types inlined. The bytes are those the tools offered
//! before the catalogue, so prompts, token counts and provider caches are unchanged.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The model-facing parameter schema of `T`.
pub fn of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let root = serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or(Value::Null);
    let mut shape = model_shape(&root);
    if let Some(o) = shape.as_object_mut() {
        // The struct's own doc comment is for readers of the code, not for the model.
        o.remove("description");
    }
    shape
}

/// One schema node in the offered shape; `Option<T>` (`["T", "null"]`) is offered as `T`.
fn model_shape(node: &Value) -> Value {
    let mut out = Map::new();
    let ty = match node.get("type") {
        Some(Value::Array(types)) => types.iter().find(|t| *t != "null").cloned(),
        other => other.cloned(),
    };
    let ty = ty.unwrap_or_else(|| Value::String("object".to_owned()));
    out.insert("type".to_owned(), ty.clone());
    if let Some(d) = node.get("description") {
        out.insert("description".to_owned(), d.clone());
    }
    if ty == "object" {
        let required = node.get("required").cloned().unwrap_or_default();
        if required.as_array().is_some_and(|r| !r.is_empty()) {
            out.insert("required".to_owned(), required);
        }
        let properties: Map<String, Value> = node
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), model_shape(v)))
            .collect();
        out.insert("properties".to_owned(), Value::Object(properties));
    }
    if let Some(items) = node.get("items") {
        out.insert("items".to_owned(), model_shape(items));
    }
    Value::Object(out)
}
