//! What an MCP tool result becomes for the model: text blocks verbatim, resources' text with
//! their URI, images as image parts (within limits), and everything else (audio, binary
//! resources, images over a limit) described by type and size rather than dropped.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::conversation::{ImagePart, human_size};

/// Images one result may carry to the model; more are described instead.
pub(crate) const MAX_IMAGES: usize = 8;
/// The largest image sent, decoded (Anthropic's per-image limit; OpenAI's is larger).
pub(crate) const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// Image types both Anthropic and OpenAI accept.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A result rendered: its text, and the images that go beside it.
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    pub(crate) text: String,
    pub(crate) images: Vec<ImagePart>,
}

/// `result` as text plus image parts; structured content when there is nothing else.
pub(crate) fn render(result: &CallToolResult) -> Rendered {
    let mut out = Rendered::default();
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|block| render_block(block, &mut out.images))
        .collect();
    out.text = if parts.is_empty() {
        match &result.structured_content {
            Some(v) => v.to_string(),
            None => "(the tool returned no content)".into(),
        }
    } else {
        parts.join("\n")
    };
    out
}

fn render_block(block: &ContentBlock, images: &mut Vec<ImagePart>) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => image(&i.mime_type, &i.data, images),
        ContentBlock::Audio(a) => format!(
            "[audio ({}, {}) not shown: cn-run sends no audio to models]",
            a.mime_type,
            human_size(base64_size(&a.data))
        ),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[binary resource {uri} ({}, {}) not shown]",
                mime_type.as_deref().unwrap_or("unknown type"),
                human_size(base64_size(blob))
            ),
            _ => "[resource of an unknown kind not shown]".into(),
        },
        ContentBlock::ResourceLink(link) => {
            format!("[resource link: {} ({})]", link.uri, link.name)
        }
        _ => "[content of an unknown kind not shown]".into(),
    }
}

/// An image block: kept as an image part when it can be sent, else described. The text
/// names it either way, so the model knows what the result held and where.
fn image(mime_type: &str, data: &str, images: &mut Vec<ImagePart>) -> String {
    let data: String = data.split_ascii_whitespace().collect();
    let part = ImagePart {
        mime_type: mime_type.to_ascii_lowercase(),
        data,
        marker: None,
    };
    let why = if !IMAGE_TYPES.contains(&part.mime_type.as_str()) {
        Some("models take only PNG, JPEG, GIF and WebP".to_owned())
    } else if base64::engine::general_purpose::STANDARD
        .decode(&part.data)
        .is_err()
    {
        Some("its data is not valid base64".to_owned())
    } else if part.bytes() > MAX_IMAGE_BYTES {
        Some(format!(
            "over the {} limit of one image",
            human_size(MAX_IMAGE_BYTES)
        ))
    } else if images.len() >= MAX_IMAGES {
        Some(format!("a result carries at most {MAX_IMAGES} images"))
    } else {
        None
    };
    if let Some(why) = why {
        part.placeholder(&why)
    } else {
        let text = format!("[image {}: {}]", images.len() + 1, part.describe());
        images.push(part);
        text
    }
}

fn base64_size(data: &str) -> usize {
    data.trim_end_matches('=').len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock};

    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";

    #[test]
    fn images_become_parts_and_the_text_names_them() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("before"),
            ContentBlock::image(PNG, "image/png"),
        ]);
        let out = render(&result);
        assert_eq!(out.images.len(), 1);
        assert_eq!(out.images[0].data, PNG);
        assert!(
            out.text.contains("before\n[image 1: image/png, 70 B]"),
            "{}",
            out.text
        );
    }

    #[test]
    fn images_that_cannot_go_are_described_with_type_and_size() {
        let big = "AAAA".repeat(MAX_IMAGE_BYTES / 3 + 2);
        let mut blocks = vec![
            ContentBlock::image(PNG, "image/svg+xml"),
            ContentBlock::image("not base64!!", "image/png"),
            ContentBlock::image(big, "image/png"),
        ];
        blocks.extend((0..MAX_IMAGES + 2).map(|_| ContentBlock::image(PNG, "image/png")));
        let out = render(&CallToolResult::success(blocks));
        assert_eq!(out.images.len(), MAX_IMAGES);
        assert!(
            out.text
                .contains("[image (image/svg+xml, 70 B) not shown: models take only")
        );
        assert!(out.text.contains("not valid base64"), "{}", out.text);
        assert!(
            out.text
                .contains("(image/png, 5.0 MiB) not shown: over the 5.0 MiB")
        );
        assert_eq!(
            out.text.matches("at most 8 images").count(),
            2,
            "{}",
            out.text
        );
    }
}
