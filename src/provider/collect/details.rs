//! OpenRouter's `reasoning_details` as a stream sends them: pieces of the same item (same
//! `index`) arrive across chunks and are joined — their text-like fields concatenated in
//! order, every other field taken from the piece that carries it (a signature arrives with
//! the last piece). Source: openrouter.ai/docs/guides/best-practices/reasoning-tokens
//! ("Streaming Behavior Notes": "The complete reasoning sequence is built by concatenating all
//! chunks in order").

use serde_json::Value;

/// The fields whose pieces are concatenated.
const JOINED: &[&str] = &["text", "summary", "data"];

/// Adds one streamed piece to `items`.
pub(crate) fn merge(items: &mut Vec<Value>, piece: Value) {
    let index = piece.get("index").and_then(Value::as_u64);
    let Value::Object(piece) = piece else {
        return;
    };
    let same = index.and_then(|i| {
        items
            .iter_mut()
            .find(|item| item.get("index").and_then(Value::as_u64) == Some(i))
    });
    let Some(Value::Object(item)) = same else {
        items.push(Value::Object(piece));
        return;
    };
    for (key, value) in piece {
        match (item.get_mut(&key), &value) {
            (Some(Value::String(kept)), Value::String(more)) if JOINED.contains(&key.as_str()) => {
                kept.push_str(more);
            }
            (_, Value::Null) => {
                item.entry(key).or_insert(Value::Null);
            }
            _ => {
                item.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::merge;

    #[test]
    fn pieces_of_one_item_join_and_the_signature_of_the_last_piece_is_kept() {
        let mut items = Vec::new();
        for piece in [
            json!({"type": "reasoning.text", "text": "Let me ", "signature": null, "id": null, "format": "anthropic-claude-v1", "index": 0}),
            json!({"type": "reasoning.text", "text": "read the file.", "signature": null, "format": "anthropic-claude-v1", "index": 0}),
            json!({"type": "reasoning.text", "text": "", "signature": "EqQBCkYIBxgCKkD", "format": "anthropic-claude-v1", "index": 0}),
            json!({"type": "reasoning.encrypted", "data": "abc", "format": "anthropic-claude-v1", "index": 1}),
        ] {
            merge(&mut items, piece);
        }
        assert_eq!(
            items,
            vec![
                json!({"type": "reasoning.text", "text": "Let me read the file.", "signature": "EqQBCkYIBxgCKkD", "id": null, "format": "anthropic-claude-v1", "index": 0}),
                json!({"type": "reasoning.encrypted", "data": "abc", "format": "anthropic-claude-v1", "index": 1}),
            ]
        );
    }

    #[test]
    fn pieces_without_an_index_stay_apart() {
        let mut items = Vec::new();
        merge(
            &mut items,
            json!({"type": "reasoning.summary", "summary": "a"}),
        );
        merge(
            &mut items,
            json!({"type": "reasoning.summary", "summary": "b"}),
        );
        assert_eq!(items.len(), 2);
    }
}
