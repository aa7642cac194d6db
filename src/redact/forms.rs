//! The spellings of a secret that outputs must not carry and requests must not send: the
//! value itself, JSON-escaped, reversed, URL-encoded, hex and base64 (standard and URL-safe,
//! at each of the three alignments it can take inside a longer encoded text).

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};

/// Values shorter than this get no encoded forms: the encoded core of a short value is too
/// short to be told from ordinary text.
const MIN_ENCODED_LEN: usize = 8;

/// How a secret was spelled where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Plain,
    JsonEscaped,
    Reversed,
    UrlEncoded,
    Hex,
    Base64,
    Base64Url,
}

impl Form {
    /// How the explanation of a refusal names the form.
    pub fn describe(self) -> &'static str {
        match self {
            Form::Plain | Form::JsonEscaped => "as is",
            Form::Reversed => "reversed",
            Form::UrlEncoded => "URL-encoded",
            Form::Hex => "hex-encoded",
            Form::Base64 => "base64-encoded",
            Form::Base64Url => "base64url-encoded",
        }
    }
}

/// Every spelling of `secret`, each with its form; duplicates removed by the caller.
pub(super) fn forms(secret: &str) -> Vec<(String, Form)> {
    let mut out = vec![(secret.to_owned(), Form::Plain)];
    let escaped = serde_json::to_string(secret).unwrap_or_default();
    // The one quote at each end (a secret that ends in `"` ends in `\"` here).
    let inner = escaped
        .strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .unwrap_or(&escaped);
    if inner != secret {
        out.push((inner.to_owned(), Form::JsonEscaped));
        // Escaped twice: JSON text inside a JSON string (a tool call's arguments in an
        // event).
        let twice = serde_json::to_string(inner).unwrap_or_default();
        if let Some(twice) = twice.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            out.push((twice.to_owned(), Form::JsonEscaped));
        }
    }
    if secret.len() < MIN_ENCODED_LEN {
        return out;
    }
    let reversed: String = secret.chars().rev().collect();
    out.push((reversed.clone(), Form::Reversed));
    encoded(secret, &mut out);
    // Reversed, then encoded: the same encodings of the reversed value.
    encoded(&reversed, &mut out);
    out
}

/// URL-encoded, hex and base64 spellings of `value`.
fn encoded(value: &str, out: &mut Vec<(String, Form)>) {
    let url = url_encoded(value, true);
    if url != value {
        out.push((url_encoded(value, false), Form::UrlEncoded));
        out.push((url, Form::UrlEncoded));
    }
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    out.push((hex.to_ascii_uppercase(), Form::Hex));
    out.push((hex, Form::Hex));
    for pad in 0..3 {
        out.push((base64_core(value.as_bytes(), pad, false), Form::Base64));
        out.push((base64_core(value.as_bytes(), pad, true), Form::Base64Url));
    }
}

/// Percent-encoding of every byte outside the unreserved set (RFC 3986).
fn url_encoded(s: &str, upper: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else if upper {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    out
}

/// The base64 characters that depend only on `bytes` when they follow `pad` other bytes
/// and are followed by anything: the start and end characters shared with the neighbours
/// are cut off.
fn base64_core(bytes: &[u8], pad: usize, url_safe: bool) -> String {
    let mut padded = vec![0u8; pad];
    padded.extend_from_slice(bytes);
    let engine = if url_safe {
        &URL_SAFE_NO_PAD
    } else {
        &STANDARD_NO_PAD
    };
    let encoded = engine.encode(&padded);
    let skip = [0, 2, 3][pad];
    let keep = padded.len() / 3 * 4 + padded.len() % 3;
    encoded
        .get(skip..keep.min(encoded.len()))
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(secret: &str, text: &str) -> bool {
        forms(secret).iter().any(|(f, _)| text.contains(f.as_str()))
    }

    #[test]
    fn base64_inside_longer_text_at_every_alignment() {
        let secret = "ghp_abcDEF123456789";
        for prefix in ["", "a", "ab", "abc", "token=", "Authorization: x"] {
            let text = format!("{prefix}{secret}&more");
            assert!(found(secret, &STANDARD_NO_PAD.encode(&text)), "{prefix}");
            assert!(found(secret, &URL_SAFE_NO_PAD.encode(&text)), "{prefix}");
        }
    }

    #[test]
    fn hex_reversed_and_url_encoded() {
        let secret = "sk-test+/=secret value";
        let hex: String = secret.bytes().map(|b| format!("{b:02X}")).collect();
        assert!(found(secret, &format!("q={hex}")));
        assert!(found(secret, &secret.chars().rev().collect::<String>()));
        assert!(found(secret, "x=sk-test%2B%2F%3Dsecret%20value"));
        assert!(found(secret, "x=sk-test%2b%2f%3dsecret%20value"));
        assert!(!found(secret, "sk-test nothing else"));
    }

    #[test]
    fn a_json_escaped_secret_that_ends_in_a_quote_is_masked_whole() {
        let secret = "s3cr3t-<value>&\"quoted\"";
        let json = serde_json::json!({ "a": secret, "b": 1 }).to_string();
        let (form, _) = forms(secret)
            .into_iter()
            .find(|(_, f)| *f == Form::JsonEscaped)
            .unwrap();
        assert!(form.ends_with("\\\""), "{form}");
        let masked = json.replace(&form, "[REDACTED]");
        assert_eq!(masked, r#"{"a":"[REDACTED]","b":1}"#);
        // Inside JSON text that is itself a JSON string (a tool call's arguments).
        let args = serde_json::json!({ "command": secret }).to_string();
        let event = serde_json::json!({ "arguments": args }).to_string();
        let r = crate::redact::Redactor::from_values(vec![secret.to_owned()]);
        let masked = r.redact(&event);
        assert!(!masked.contains("s3cr3t"), "{masked}");
        assert!(serde_json::from_str::<serde_json::Value>(&masked).is_ok());
    }

    #[test]
    fn short_values_have_only_plain_forms() {
        assert_eq!(forms("abcdef").len(), 1);
    }
}
