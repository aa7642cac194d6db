//! The tokens an image a tool returned takes in a request, so the context estimate (and with
//! it compaction and the window check) sees images, not only their one-line caption.
//!
//! Providers bill an image by its pixels, not its bytes, so the count reads the width and
//! height from the image's header (PNG, JPEG, GIF, WebP: the types cn-run sends) and applies
//! the larger of the two published rules:
//!
//! - **Anthropic**: width × height / 750, after scaling the image down to 1568 px on its long
//!   edge; at most about 1,600 tokens (a bigger image is scaled to that size first).
//! - **OpenAI** (gpt-4o, gpt-4.1, gpt-5, o-series, high detail): scaled to fit 2048 × 2048,
//!   then its short side to 768; 85 + 170 per 512-px tile (at most 1,445).
//!
//! Why the larger, whatever the model: the count exists to compact before the provider
//! rejects a request, so erring high is the safe side (a small image counts at least 255,
//! the OpenAI floor, where Claude bills ~14 for 100 × 100), and it needs no knowledge of how
//! the provider in front of the model bills (a Claude model behind an OpenAI-compatible
//! gateway is still billed Anthropic's way). The family factor applies on top, as for text.
//! An image whose size cannot be read counts the largest amount, [`MAX_TOKENS`]. Known
//! under-counts: patch-billed models (gpt-4.1-mini/nano, gpt-5-mini/nano, o4-mini: up to
//! ~3,800 for a large image) and models reading larger images (Claude Opus 4.7: long edge
//! 2576 px); the provider's reported usage and its context-length error remain the backstop.

use base64::Engine as _;

use crate::conversation::ImagePart;

/// What an image whose size cannot be read counts: the Anthropic ceiling, the larger one.
pub const MAX_TOKENS: u64 = 1_600;
/// Base64 characters decoded first to find the size (a header is usually in the first KiB;
/// a JPEG's frame header may follow a large EXIF block, so the whole image is the fallback).
const HEAD_CHARS: usize = 64 * 1024;

/// The tokens `image` is counted as (see the module header).
pub fn image_tokens(image: &ImagePart) -> u64 {
    match dimensions(&image.data) {
        Some((w, h)) => anthropic(w, h).max(openai(w, h)),
        None => MAX_TOKENS,
    }
}

/// Width and height from the image's header, decoding as little of the base64 as it can.
fn dimensions(data: &str) -> Option<(u64, u64)> {
    let engine = base64::engine::general_purpose::STANDARD;
    let head_len = data.len().min(HEAD_CHARS) / 4 * 4;
    let size = |bytes: &[u8]| {
        imagesize::blob_size(bytes)
            .ok()
            .filter(|s| s.width > 0 && s.height > 0)
    };
    let head = data.get(..head_len).and_then(|h| engine.decode(h).ok());
    let found = head.as_deref().and_then(size).or_else(|| {
        let whole = engine.decode(data.trim_end()).ok()?;
        size(&whole)
    })?;
    Some((found.width as u64, found.height as u64))
}

/// Anthropic's rule: area / 750 after scaling the long edge to 1568, at most [`MAX_TOKENS`].
fn anthropic(w: u64, h: u64) -> u64 {
    let (w, h) = fit(w, h, 1568);
    (w * h).div_ceil(750).clamp(1, MAX_TOKENS)
}

/// OpenAI's high-detail tile rule.
fn openai(w: u64, h: u64) -> u64 {
    let (w, h) = fit(w, h, 2048);
    let short = w.min(h);
    let (w, h) = if short > 768 {
        (w * 768 / short, h * 768 / short)
    } else {
        (w, h)
    };
    85 + 170 * w.div_ceil(512) * h.div_ceil(512)
}

/// `(w, h)` scaled down (aspect kept) so neither exceeds `edge`.
fn fit(w: u64, h: u64, edge: u64) -> (u64, u64) {
    let long = w.max(h);
    if long <= edge {
        (w, h)
    } else {
        ((w * edge / long).max(1), (h * edge / long).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> ImagePart {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        bytes.extend_from_slice(&w.to_be_bytes());
        bytes.extend_from_slice(&h.to_be_bytes());
        bytes.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
        ImagePart {
            mime_type: "image/png".into(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            marker: None,
        }
    }

    #[test]
    fn the_published_examples_come_out() {
        // Anthropic's table: 200×200 ≈ 54, 1000×1000 ≈ 1334, 1092×1092 ≈ 1590.
        assert_eq!(anthropic(200, 200), 54);
        assert_eq!(anthropic(1000, 1000), 1334);
        assert_eq!(anthropic(1092, 1092), 1590);
        // OpenAI's examples: 1024×1024 → 765; 2048×4096 → 1105.
        assert_eq!(openai(1024, 1024), 765);
        assert_eq!(openai(2048, 4096), 1105);
    }

    #[test]
    fn an_image_counts_the_larger_rule_and_large_ones_are_capped() {
        assert_eq!(image_tokens(&png(1, 1)), 255);
        assert_eq!(image_tokens(&png(1000, 1000)), 1334);
        assert_eq!(image_tokens(&png(8000, 8000)), MAX_TOKENS);
        assert_eq!(image_tokens(&png(4000, 100)), 765);
        let junk = ImagePart {
            mime_type: "image/png".into(),
            data: "bm90IGFuIGltYWdl".into(),
            marker: None,
        };
        assert_eq!(image_tokens(&junk), MAX_TOKENS);
    }
}
