//! How [`Usage`] is written and read: with the names and meanings of `claude -p`'s `usage`
//! (`input_tokens` counts the input that was neither read from nor written to the cache;
//! `cache_read_input_tokens`, `cache_creation_input_tokens`), plus cn-run's
//! `total_input_tokens` (the whole prompt). Session files written before, with
//! `cache_read_tokens`/`cache_write_tokens` and `input_tokens` as the whole prompt, still read.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use super::Usage;

/// The written form of [`Usage`].
#[derive(Serialize, Deserialize, JsonSchema)]
pub(super) struct UsageWire {
    /// Input tokens not read from or written to the prompt cache (as in `claude -p`).
    input_tokens: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default, alias = "cache_write_tokens")]
    cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default, alias = "cache_read_tokens")]
    cache_read_input_tokens: u64,
    output_tokens: u64,
    /// Every input token, cached or not (cn-run's; the sum of the three above).
    #[serde(default, skip_serializing_if = "is_absent")]
    #[schemars(required)]
    total_input_tokens: Option<u64>,
}

fn is_absent(v: &Option<u64>) -> bool {
    v.is_none()
}

impl From<Usage> for UsageWire {
    fn from(u: Usage) -> Self {
        let cached = u.cache_read_tokens + u.cache_write_tokens;
        UsageWire {
            input_tokens: u.input_tokens.saturating_sub(cached),
            cache_creation_input_tokens: u.cache_write_tokens,
            cache_read_input_tokens: u.cache_read_tokens,
            output_tokens: u.output_tokens,
            total_input_tokens: Some(u.input_tokens),
        }
    }
}

impl From<UsageWire> for Usage {
    fn from(w: UsageWire) -> Self {
        Usage {
            // Older files have no total: their `input_tokens` was the whole prompt.
            input_tokens: w.total_input_tokens.unwrap_or(w.input_tokens),
            output_tokens: w.output_tokens,
            cache_read_tokens: w.cache_read_input_tokens,
            cache_write_tokens: w.cache_creation_input_tokens,
        }
    }
}

impl JsonSchema for Usage {
    fn schema_name() -> Cow<'static, str> {
        "Usage".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        UsageWire::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_like_claude_and_read_back_also_from_the_old_names() {
        let u = Usage {
            input_tokens: 1000,
            output_tokens: 50,
            cache_read_tokens: 800,
            cache_write_tokens: 100,
        };
        let v = serde_json::to_value(u).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"input_tokens": 100, "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 800, "output_tokens": 50, "total_input_tokens": 1000})
        );
        assert_eq!(serde_json::from_value::<Usage>(v).unwrap(), u);
        let old = serde_json::json!({"input_tokens": 1000, "output_tokens": 50,
            "cache_read_tokens": 800, "cache_write_tokens": 100});
        assert_eq!(serde_json::from_value::<Usage>(old).unwrap(), u);
    }
}
