//! Which edit tool a model gets. Continue offers MultiEdit to model families known to
//! handle a list of edits well and the simpler Edit to everything else; we keep its rule so
//! a job behaves the same under cn-run as under `cn`.

use std::sync::Arc;

use super::{Edit, MultiEdit, Tool};

/// Family names (lowercase) that get MultiEdit; `o` followed by a digit (o1, o3, …) too.
const FAMILIES: &[&str] = &[
    "gemini", "claude", "gpt", "kimi", "qwen", "llama", "nemotron", "grok", "mistral",
];

/// Whether `model` (a model name, matched case-insensitively anywhere in it) gets MultiEdit.
pub fn supports_multi_edit(model: &str) -> bool {
    let lower = model.to_lowercase();
    if FAMILIES.iter().any(|f| lower.contains(f)) {
        return true;
    }
    let bytes = lower.as_bytes();
    bytes
        .windows(2)
        .any(|w| w[0] == b'o' && w[1].is_ascii_digit())
}

/// MultiEdit for capable models, Edit otherwise.
pub fn edit_tool_for(model: &str) -> Arc<dyn Tool> {
    if supports_multi_edit(model) {
        Arc::new(MultiEdit)
    } else {
        Arc::new(Edit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capable_families_get_multi_edit() {
        for m in [
            "claude-sonnet-4-5",
            "GPT-4.1",
            "o3-mini",
            "Qwen2.5-Coder",
            "meta-llama/Llama-3",
            "mistral-large",
        ] {
            assert!(supports_multi_edit(m), "{m}");
            assert_eq!(edit_tool_for(m).name(), "MultiEdit");
        }
        for m in ["deepseek-chat", "phi-3", "command-r", ""] {
            assert!(!supports_multi_edit(m), "{m}");
            assert_eq!(edit_tool_for(m).name(), "Edit");
        }
    }
}
