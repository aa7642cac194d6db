//! The text a fetched body gives the model: HTML turned into markdown (scripts, styles and
//! the like dropped), other text kept as it is, binary refused, and the result cut to the
//! output limit with a note of how much was left out.

use super::ToolError;

/// The body as text: HTML becomes markdown, other text stays as it is, binary is refused.
pub(crate) fn to_text(body: &[u8], content_type: &str) -> Result<String, ToolError> {
    let sniff = &body[..body.len().min(1024)];
    let looks_html = {
        let head = String::from_utf8_lossy(sniff).to_ascii_lowercase();
        head.trim_start().starts_with("<!doctype html") || head.contains("<html")
    };
    if content_type.contains("html") || (content_type.is_empty() && looks_html) {
        let html = String::from_utf8_lossy(body);
        let converter = htmd::HtmlToMarkdown::builder()
            .skip_tags(vec![
                "script", "style", "noscript", "template", "svg", "head", "iframe",
            ])
            .build();
        return converter.convert(&html).map_err(|e| {
            ToolError::RespondToModel(format!("Could not convert the HTML page to text: {e}"))
        });
    }
    let textual = content_type.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml", "csv"]
            .iter()
            .any(|t| content_type.contains(t));
    if textual || (!sniff.contains(&0) && std::str::from_utf8(sniff).is_ok()) {
        return Ok(String::from_utf8_lossy(body).into_owned());
    }
    Err(ToolError::RespondToModel(format!(
        "The response is binary ({}, {} bytes read), not text; download it with Bash if you need the file.",
        if content_type.is_empty() {
            "no content type"
        } else {
            content_type
        },
        body.len()
    )))
}

/// The first `max` characters of `text`, with a note of how many were cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => {
            let rest = text[at..].chars().count();
            format!(
                "{}\n\n({rest} characters of fetched content truncated)",
                &text[..at]
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_the_characters_removed() {
        assert_eq!(cut("abcdef", 10), "abcdef");
        assert_eq!(
            cut("ééééé", 2),
            "éé\n\n(3 characters of fetched content truncated)"
        );
    }

    #[test]
    fn binary_bodies_are_refused_and_text_is_kept() {
        assert!(to_text(&[0, 1, 2, 0xff], "image/png").is_err());
        assert_eq!(
            to_text(b"{\"a\":1}", "application/json").unwrap(),
            "{\"a\":1}"
        );
        let md = to_text(
            b"<html><body><h1>Title</h1><script>x()</script></body></html>",
            "",
        )
        .unwrap();
        assert_eq!(md.trim(), "# Title");
    }
}
