//! `{{ params.NAME }}` substitution in prompts, rules and check commands. Deliberately tiny:
//! names only, no expressions, so a job's text means exactly what it says.
//!
//! Parameters are data: in shell text (`checks[].run`) a value is shell-quoted as one word,
//! so `; id`, `$(…)`, backticks and newlines in it stay text. `{{ params.NAME | raw }}` puts
//! the value in as written, for a job that really wants shell text (`validate` warns).
//! A reference the job wrapped in its own quotes (`'{{ params.x }}'`, `"… {{ params.x }} …"`)
//! closes that quote around the quoted value and reopens it, so it still stays one word.

use std::collections::BTreeMap;

/// A reference in a template that has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub name: String,
    /// Byte offset of the `{{` in the template.
    pub offset: usize,
}

/// Replace every `{{ params.NAME }}` (spaces optional) by its value. Text that is not such a
/// reference, including other `{{ … }}`, is left as written.
pub fn render(template: &str, values: &BTreeMap<String, String>) -> Result<String, Vec<Unknown>> {
    render_as(template, values, Context::Text)
}

/// Where a template's text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Prose for the model: values as written.
    Text,
    /// A shell command: each value one shell word, unless the reference says `| raw`.
    Shell,
}

/// The name of a reference and whether it opts out of quoting (`params.NAME | raw`).
fn reference(inner: &str) -> Option<(&str, bool)> {
    let rest = inner.strip_prefix("params.")?;
    let (name, raw) = match rest.split_once('|') {
        Some((name, filter)) if filter.trim() == "raw" => (name.trim_end(), true),
        Some(_) => return None,
        None => (rest, false),
    };
    is_name(name).then_some((name, raw))
}

/// Whether `template` puts a parameter into shell text unquoted (`| raw`).
pub fn has_raw(template: &str) -> bool {
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        if reference(after[..end].trim()).is_some_and(|(_, raw)| raw) {
            return true;
        }
        rest = &after[end + 2..];
    }
    false
}

/// [`render`] for text of the given context.
pub fn render_as(
    template: &str,
    values: &BTreeMap<String, String>,
    context: Context,
) -> Result<String, Vec<Unknown>> {
    let mut out = String::with_capacity(template.len());
    let mut unknown = Vec::new();
    let mut rest = template;
    let mut base = 0;
    let mut quote = QuoteState::default();
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        quote.scan(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = after[..end].trim();
        let consumed = start + 2 + end + 2;
        if let Some((name, raw)) = reference(inner) {
            match values.get(name) {
                Some(v) if context == Context::Shell && !raw => {
                    out.push_str(&quote.word(v));
                }
                Some(v) => {
                    out.push_str(v);
                    if context == Context::Shell {
                        quote.scan(v);
                    }
                }
                None => unknown.push(Unknown {
                    name: name.to_owned(),
                    offset: base + start,
                }),
            }
        } else {
            out.push_str(&rest[start..consumed]);
            quote.scan(&rest[start..consumed]);
        }
        rest = &rest[consumed..];
        base += consumed;
    }
    out.push_str(rest);
    if unknown.is_empty() {
        Ok(out)
    } else {
        Err(unknown)
    }
}

/// Which shell quote the text written so far leaves open.
#[derive(Debug, Default, Clone, Copy)]
struct QuoteState {
    open: Option<char>,
    escaped: bool,
}

impl QuoteState {
    /// Follow `text` as a POSIX shell reads it: `'…'` has no escapes, `\` escapes outside
    /// single quotes.
    fn scan(&mut self, text: &str) {
        for c in text.chars() {
            if self.escaped {
                self.escaped = false;
                continue;
            }
            match (self.open, c) {
                (Some('\''), '\'') => self.open = None,
                (Some('\''), _) => {}
                (_, '\\') => self.escaped = true,
                (None, '\'' | '"') => self.open = Some(c),
                (Some('"'), '"') => self.open = None,
                _ => {}
            }
        }
    }

    /// `value` as one shell word at this point: inside the job's own quotes, the quote is
    /// closed before the value and reopened after it.
    fn word(self, value: &str) -> String {
        let quoted = shell_words::quote(value);
        match self.open {
            Some(q) => format!("{q}{quoted}{q}"),
            None => quoted.into_owned(),
        }
    }
}

/// The parameter names a template refers to.
pub fn references(template: &str) -> Vec<String> {
    let empty = BTreeMap::new();
    match render(template, &empty) {
        Ok(_) => Vec::new(),
        Err(unknown) => unknown.into_iter().map(|u| u.name).collect(),
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals() -> BTreeMap<String, String> {
        BTreeMap::from([("path".to_owned(), "src/".to_owned())])
    }

    #[test]
    fn substitutes_with_and_without_spaces() {
        assert_eq!(
            render("fix {{ params.path }} and {{params.path}}", &vals()).unwrap(),
            "fix src/ and src/"
        );
    }

    #[test]
    fn reports_unknown_names_with_offsets() {
        let err = render("a {{ params.nope }} b", &vals()).unwrap_err();
        assert_eq!(
            err,
            vec![Unknown {
                name: "nope".into(),
                offset: 2
            }]
        );
    }

    #[test]
    fn shell_values_are_one_word_unless_raw() {
        for value in [
            ". ; touch /tmp/pwned",
            "$(touch marker)",
            "`touch marker`",
            "a\nb",
            "it's \"quoted\"",
            "x && y || z",
            "",
        ] {
            let values: BTreeMap<String, String> = [("v".to_owned(), value.to_owned())].into();
            let cmd = render_as("printf %s {{ params.v }}", &values, Context::Shell).unwrap();
            let words = shell_words::split(&cmd).unwrap();
            assert_eq!(words, ["printf", "%s", value], "{cmd}");
            let raw = render_as("echo {{ params.v | raw }}", &values, Context::Shell).unwrap();
            assert_eq!(raw, format!("echo {value}"));
        }
        assert!(has_raw("ls {{params.p|raw}}") && !has_raw("ls {{ params.p }}"));
    }

    #[test]
    fn a_value_in_the_jobs_own_quotes_stays_one_word() {
        let cases = [
            ("printf %s '{{ params.v }}'", "", ""),
            ("printf %s \"{{ params.v }}\"", "", ""),
            ("printf %s 'pre {{ params.v }} post'", "pre ", " post"),
            ("printf %s \"pre {{ params.v }} post\"", "pre ", " post"),
            ("printf %s \"it's {{ params.v }}\"", "it's ", ""),
            ("printf %s 'a\\'{{ params.v }}", "a\\", ""),
            ("printf %s x\\'{{ params.v }}", "x'", ""),
        ];
        for value in [
            ". ; touch /tmp/pwned",
            "$(id)",
            "`id`",
            "a b\nc",
            "it's \"q\"",
            "",
        ] {
            let values: BTreeMap<String, String> = [("v".to_owned(), value.to_owned())].into();
            for (template, before, after) in cases {
                let cmd = render_as(template, &values, Context::Shell).unwrap();
                let words = shell_words::split(&cmd).unwrap();
                assert_eq!(
                    words,
                    ["printf", "%s", &format!("{before}{value}{after}")],
                    "{cmd}"
                );
            }
        }
    }

    #[test]
    fn leaves_other_braces_alone() {
        assert_eq!(
            render("${{ secrets.X }} {{ x }} {{", &vals()).unwrap(),
            "${{ secrets.X }} {{ x }} {{"
        );
    }
}
