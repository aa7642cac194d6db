//! An image a tool returned (an MCP server's image content), kept with the tool result so
//! each provider can send it the way it accepts images: Anthropic inside the tool result,
//! OpenAI-compatible servers in a user message after the results, or, for a model that takes
//! no images, as a note naming its type and size.

use serde::{Deserialize, Serialize};

/// One image: its media type and its bytes in standard base64, as the server sent them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImagePart {
    pub mime_type: String,
    pub data: String,
    /// In an untrusted run, the lines that enclose the image where it is sent (the same tag
    /// as its result's text), so the model reads it as untrusted content too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<ImageMarker>,
}

/// The opening and closing tag around an image from an untrusted run's tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImageMarker {
    pub open: String,
    pub close: String,
}

impl ImagePart {
    /// The decoded size in bytes, from the base64 length.
    pub fn bytes(&self) -> usize {
        let data = self.data.trim_end_matches('=');
        data.len() * 3 / 4
    }

    /// `image/png, 1.2 KiB`: what a placeholder says of it.
    pub fn describe(&self) -> String {
        format!("{}, {}", self.mime_type, human_size(self.bytes()))
    }

    /// A `data:` URL of the image (OpenAI's `image_url`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime_type, self.data)
    }

    /// The note that stands for the image where it cannot be sent.
    pub fn placeholder(&self, why: &str) -> String {
        format!("[image ({}) not shown: {why}]", self.describe())
    }
}

/// Bytes in B, KiB or MiB with one decimal.
pub fn human_size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / (KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_the_base64_length() {
        let image = ImagePart {
            mime_type: "image/png".into(),
            data: "aGVsbG8=".into(),
            marker: None,
        };
        assert_eq!(image.bytes(), 5);
        assert_eq!(image.describe(), "image/png, 5 B");
        assert_eq!(human_size(3 * 1024 * 1024 / 2), "1.5 MiB");
        assert!(image.data_url().starts_with("data:image/png;base64,aGVs"));
    }
}
