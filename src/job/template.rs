//! `{{ params.NAME }}` substitution in prompts and rules. Deliberately tiny: names only, no
//! expressions, so a job's text means exactly what it says.

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
    let mut out = String::with_capacity(template.len());
    let mut unknown = Vec::new();
    let mut rest = template;
    let mut base = 0;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = after[..end].trim();
        let consumed = start + 2 + end + 2;
        match inner.strip_prefix("params.") {
            Some(name) if is_name(name) => match values.get(name) {
                Some(v) => out.push_str(v),
                None => unknown.push(Unknown {
                    name: name.to_owned(),
                    offset: base + start,
                }),
            },
            _ => out.push_str(&rest[start..consumed]),
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
    fn leaves_other_braces_alone() {
        assert_eq!(
            render("${{ secrets.X }} {{ x }} {{", &vals()).unwrap(),
            "${{ secrets.X }} {{ x }} {{"
        );
    }
}
