//! Images in an OpenAI-compatible conversation. Chat Completions takes images only in user
//! messages (a `tool` message's content is text only), so the images of a run of tool results
//! follow them in one user message of `image_url` parts, each named by its call. A model that
//! is not known to take images gets, in the tool result, a note naming each image's type and
//! size instead (a text-only model answers 400 to an image part).

use std::borrow::Cow;

use super::wire;
use crate::conversation::{ImagePart, Message};

/// Model names (lower-case, after any `vendor/` routing prefix) known to take images, from
/// the providers' model pages: OpenAI (gpt-4o, gpt-4.1, gpt-5, o1/o3/o4 but not their
/// -mini text models), Anthropic and Google through compatible endpoints, and the open
/// vision families served by vLLM, Ollama and llama.cpp.
const VISION_PREFIXES: &[&str] = &[
    "gpt-4o",
    "chatgpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "claude",
    "gemini",
    "gemma-3",
    "gemma3",
    "llava",
    "bakllava",
    "pixtral",
    "llama-4",
    "llama4",
    "qvq",
    "minicpm-v",
    "moondream",
    "internvl",
    "grok-4",
    "mistral-medium",
    "mistral-small-3",
];
/// Names within those families that are text-only.
const TEXT_ONLY: &[&str] = &["o1-mini", "o1-preview", "o3-mini"];
/// Words in a name that mark a vision model of any family (`qwen2.5-vl`, `llama3.2-vision`).
const VISION_MARKS: &[&str] = &["-vl", "vision"];

/// Whether `model` is known to take images.
pub(crate) fn takes_images(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    if TEXT_ONLY.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    VISION_PREFIXES.iter().any(|p| name.starts_with(p))
        || VISION_MARKS.iter().any(|m| name.contains(m))
}

/// The text of a tool result: as it is, or with a note per image the model cannot take.
pub(crate) fn tool_text<'a>(content: &'a str, images: &[ImagePart], vision: bool) -> Cow<'a, str> {
    if images.is_empty() {
        return Cow::Borrowed(content);
    }
    let notes: Vec<String> = if vision {
        vec![format!(
            "[{} image(s) of this result follow in the next message]",
            images.len()
        )]
    } else {
        images
            .iter()
            .map(|i| i.placeholder("this model is not known to take images"))
            .collect()
    };
    Cow::Owned(format!("{content}\n{}", notes.join("\n")))
}

/// The user message carrying the images of the tool results in `results`, if any.
pub(crate) fn after_results(results: &[&Message]) -> Option<wire::Message<'static>> {
    let mut parts = Vec::new();
    for message in results {
        let Message::Tool {
            tool_call_id,
            name,
            images,
            ..
        } = message
        else {
            continue;
        };
        if images.is_empty() {
            continue;
        }
        parts.push(wire::Part::Text {
            text: format!("The images returned by call {tool_call_id} ({name}):"),
        });
        // In an untrusted run each image sits between its marker's tags, like the text.
        for image in images {
            let marker = image.marker.as_ref();
            parts.extend(marker.map(|m| wire::Part::Text {
                text: m.open.clone(),
            }));
            parts.push(wire::Part::ImageUrl {
                image_url: wire::ImageUrl {
                    url: image.data_url(),
                },
            });
            parts.extend(marker.map(|m| wire::Part::Text {
                text: m.close.clone(),
            }));
        }
    }
    (!parts.is_empty()).then_some(wire::Message::UserParts { content: parts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vision_models_are_told_from_text_models() {
        for yes in [
            "gpt-4o",
            "openai/gpt-4.1-mini",
            "gpt-5",
            "o3",
            "claude-sonnet-4-5",
            "gemini-2.5-pro",
            "qwen2.5-vl-7b",
            "llama3.2-vision",
            "pixtral-12b",
        ] {
            assert!(takes_images(yes), "{yes}");
        }
        for no in [
            "gpt-3.5-turbo",
            "o1-mini",
            "o3-mini",
            "deepseek-chat",
            "my-local-llama",
            "mistral-large-latest",
            "llama-3.1-8b-instant",
        ] {
            assert!(!takes_images(no), "{no}");
        }
    }
}
