//! Dollar cost of a request from the provider's own usage numbers and a price table.
//!
//! The built-in table covers common models (list prices in USD per million tokens, as
//! published by the providers in 2025); a job overrides it with `model.pricing`. A model
//! with no known price has no cost — `null` and `cost_unknown: true` in the result, never
//! a silent 0.

use crate::conversation::Usage;

/// USD per million tokens.
#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Uncached input tokens.
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Input tokens read from the prompt cache (default: the input price).
    pub cache_read_per_mtok: Option<f64>,
    /// Input tokens written to the prompt cache (default: the input price).
    pub cache_write_per_mtok: Option<f64>,
}

const fn p(input: f64, output: f64, read: f64, write: f64) -> Price {
    Price {
        input_per_mtok: input,
        output_per_mtok: output,
        cache_read_per_mtok: Some(read),
        cache_write_per_mtok: Some(write),
    }
}

/// Model-name prefixes and their prices; the longest matching prefix wins.
const TABLE: &[(&str, Price)] = &[
    ("gpt-4o-mini", p(0.15, 0.60, 0.075, 0.15)),
    ("gpt-4o", p(2.50, 10.00, 1.25, 2.50)),
    ("gpt-4.1-nano", p(0.10, 0.40, 0.025, 0.10)),
    ("gpt-4.1-mini", p(0.40, 1.60, 0.10, 0.40)),
    ("gpt-4.1", p(2.00, 8.00, 0.50, 2.00)),
    ("gpt-5-nano", p(0.05, 0.40, 0.005, 0.05)),
    ("gpt-5-mini", p(0.25, 2.00, 0.025, 0.25)),
    ("gpt-5", p(1.25, 10.00, 0.125, 1.25)),
    ("o4-mini", p(1.10, 4.40, 0.275, 1.10)),
    ("o3-mini", p(1.10, 4.40, 0.55, 1.10)),
    ("o3", p(2.00, 8.00, 0.50, 2.00)),
    ("claude-opus-4-5", p(5.00, 25.00, 0.50, 6.25)),
    ("claude-opus-4", p(15.00, 75.00, 1.50, 18.75)),
    ("claude-sonnet-4", p(3.00, 15.00, 0.30, 3.75)),
    ("claude-3-7-sonnet", p(3.00, 15.00, 0.30, 3.75)),
    ("claude-3-5-sonnet", p(3.00, 15.00, 0.30, 3.75)),
    ("claude-haiku-4", p(1.00, 5.00, 0.10, 1.25)),
    ("claude-3-5-haiku", p(0.80, 4.00, 0.08, 1.00)),
];

/// The built-in price of `model`, if known.
pub fn builtin_price(model: &str) -> Option<Price> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    TABLE
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, price)| *price)
}

/// A running total with one more cost added: a cost not known makes the total not known.
pub fn add_cost(total: Option<f64>, cost: Option<f64>) -> Option<f64> {
    match (total, cost) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    }
}

/// Cost in USD of one response. `usage.input_tokens` counts every input token, cached
/// ones included; cache reads and writes are priced at their own rates.
pub fn cost(price: &Price, usage: &Usage) -> f64 {
    let cached = usage.cache_read_tokens + usage.cache_write_tokens;
    let plain = usage.input_tokens.saturating_sub(cached) as f64;
    let read = price.cache_read_per_mtok.unwrap_or(price.input_per_mtok);
    let write = price.cache_write_per_mtok.unwrap_or(price.input_per_mtok);
    (plain * price.input_per_mtok
        + usage.cache_read_tokens as f64 * read
        + usage.cache_write_tokens as f64 * write
        + usage.output_tokens as f64 * price.output_per_mtok)
        / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(
            builtin_price("gpt-4o-mini-2024-07-18")
                .unwrap()
                .input_per_mtok,
            0.15
        );
        assert_eq!(builtin_price("gpt-4o").unwrap().input_per_mtok, 2.50);
        assert_eq!(
            builtin_price("openai/gpt-4.1").unwrap().output_per_mtok,
            8.00
        );
        assert!(builtin_price("my-local-llama").is_none());
    }

    #[test]
    fn cost_prices_cached_tokens_separately() {
        let price = builtin_price("claude-sonnet-4-5").unwrap();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 500_000,
            cache_write_tokens: 0,
        };
        let c = cost(&price, &usage);
        assert!((c - (1.5 + 0.15 + 1.5)).abs() < 1e-9, "{c}");
    }
}
