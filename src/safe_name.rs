//! One word made of safe characters: everything outside `[A-Za-z0-9_-]` becomes `_`.
//! MCP tool names (the strictest providers' rule for function names) and the scheduler's
//! per-job log folders both need exactly this, so it is written once.

/// `name` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub(crate) fn safe_word(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::safe_word;

    #[test]
    fn only_letters_digits_dash_and_underscore_stay() {
        for (name, word) in [
            ("a-b_C9", "a-b_C9"),
            ("nightly lint/../x.é", "nightly_lint____x__"),
        ] {
            assert_eq!(safe_word(name), word, "{name}");
        }
    }
}
