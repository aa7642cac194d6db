//! Tool calls for models without native tool calling, the way Continue keeps them: the
//! tools are described in the system message, the model writes
//! `<tool>{"name": "Read", "arguments": {"filepath": "a.rs"}}</tool>`, and results go back as
//! `<tool_result>` user messages. Switched on per model (`model.tool_call_format: text`).

use crate::conversation::{Message, ToolCall, ToolSpec};

/// The system message addition that teaches the format and lists the tools.
pub fn instructions(tools: &[ToolSpec]) -> String {
    let mut text = String::from(
        "<tools>\nYou can call tools. To call one, write exactly one block per call:\n\
         <tool>{\"name\": \"TOOL\", \"arguments\": {…}}</tool>\n\
         with a JSON object inside. You may write several blocks in one answer. Results come back \
         in the next message as <tool_result> blocks. When you are done, answer without any \
         <tool> block. Available tools (name, what it does, JSON schema of its arguments):\n",
    );
    for t in tools {
        text.push_str(&format!(
            "\n## {}\n{}\n{}\n",
            t.name,
            t.description.trim(),
            t.parameters
        ));
    }
    text.push_str("</tools>");
    text
}

/// The `<tool>` blocks of a response as calls (ids `text_<turn>_<n>`), and the text without them.
pub fn parse(text: &str, turn: u32) -> (String, Vec<ToolCall>) {
    let mut calls = Vec::new();
    let mut rest = String::with_capacity(text.len());
    let mut cursor = text;
    while let Some(start) = cursor.find("<tool>") {
        rest.push_str(&cursor[..start]);
        let after = &cursor[start + "<tool>".len()..];
        let Some(end) = after.find("</tool>") else {
            rest.push_str(&cursor[start..]);
            cursor = "";
            break;
        };
        let body = after[..end].trim();
        let parsed: Option<(String, String)> = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|v| {
                let name = v.get("name")?.as_str()?.to_owned();
                let args = v
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({}));
                Some((name, args.to_string()))
            });
        match parsed {
            Some((name, arguments)) => calls.push(ToolCall {
                id: format!("text_{turn}_{}", calls.len() + 1),
                name,
                arguments,
            }),
            // Not a well-formed call: keep it as text, so the model sees what it wrote.
            None => rest.push_str(&cursor[start..start + "<tool>".len() + end + "</tool>".len()]),
        }
        cursor = &after[end + "</tool>".len()..];
    }
    rest.push_str(cursor);
    (rest.trim().to_owned(), calls)
}

/// The history as a model without tool calling sees it: calls written back as `<tool>`
/// blocks in the assistant's text, results as `<tool_result>` user messages.
pub fn to_text_history(history: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(history.len());
    extend_text_history(&mut out, history);
    out
}

/// Appends the text form of `messages` to `out` (a result joins the results just before
/// it, also those of an earlier call).
pub fn extend_text_history(out: &mut Vec<Message>, messages: &[Message]) {
    for m in messages {
        match m {
            Message::Assistant {
                content,
                tool_calls,
                summary,
                ..
            } => {
                let mut text = content.clone();
                for c in tool_calls {
                    let args: serde_json::Value = serde_json::from_str(&c.arguments)
                        .unwrap_or_else(|_| serde_json::Value::String(c.arguments.clone()));
                    text.push_str(&format!(
                        "\n<tool>{}</tool>",
                        serde_json::json!({"name": c.name, "arguments": args})
                    ));
                }
                out.push(Message::Assistant {
                    content: text.trim().to_owned(),
                    tool_calls: Vec::new(),
                    summary: *summary,
                    reasoning: crate::conversation::Reasoning::default(),
                });
            }
            Message::Tool {
                name,
                content,
                is_error,
                images,
                ..
            } => {
                let status = if *is_error { " error=\"true\"" } else { "" };
                let notes = image_notes(images);
                let block = format!(
                    "<tool_result name=\"{name}\"{status}>\n{content}{notes}\n</tool_result>"
                );
                // Consecutive results join one user message.
                match out.last_mut() {
                    Some(Message::User { content }) if content.starts_with("<tool_result") => {
                        content.push('\n');
                        content.push_str(&block);
                    }
                    _ => out.push(Message::user(block)),
                }
            }
            other @ Message::User { .. } => out.push(other.clone()),
        }
    }
}

/// What stands for a result's images in text mode: results go back as text, so each image
/// is named (number, type, size) and the model is told it is not shown. The note is cn-run's,
/// after any untrusted marker of the result's text.
fn image_notes(images: &[crate::conversation::ImagePart]) -> String {
    images
        .iter()
        .enumerate()
        .map(|(n, image)| {
            format!(
                "\n[image {} of this result ({}) not shown: with tool_call_format: text, tool \
                 results reach you as text only]",
                n + 1,
                image.describe()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_blocks_and_keeps_the_rest() {
        let text = "Let me look.\n<tool>{\"name\": \"Read\", \"arguments\": {\"filepath\": \"a.rs\"}}</tool>\n<tool>{\"name\": \"List\", \"arguments\": {\"dirpath\": \".\"}}</tool>";
        let (rest, calls) = parse(text, 3);
        assert_eq!(rest, "Let me look.");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id, "text_3_1");
        assert_eq!(calls[0].name, "Read");
        assert_eq!(calls[0].arguments, "{\"filepath\":\"a.rs\"}");
        let (rest, calls) = parse("<tool>not json</tool> done", 1);
        assert!(calls.is_empty());
        assert_eq!(rest, "<tool>not json</tool> done");
        assert_eq!(parse("plain answer", 1).1.len(), 0);
    }

    #[test]
    fn history_round_trips_into_text() {
        let history = vec![
            Message::user("go"),
            Message::assistant(
                "reading",
                vec![ToolCall {
                    id: "x".into(),
                    name: "Read".into(),
                    arguments: "{\"filepath\":\"a\"}".into(),
                }],
            ),
            Message::Tool {
                tool_call_id: "x".into(),
                name: "Read".into(),
                content: "data".into(),
                is_error: false,
                images: Vec::new(),
            },
        ];
        let text = to_text_history(&history);
        assert_eq!(text.len(), 3);
        assert!(
            text[1]
                .text()
                .contains("<tool>{\"arguments\":{\"filepath\":\"a\"},\"name\":\"Read\"}</tool>")
                || text[1].text().contains("\"name\":\"Read\"")
        );
        assert!(
            matches!(&text[2], Message::User { content } if content.contains("<tool_result name=\"Read\">\ndata"))
        );
    }
}
