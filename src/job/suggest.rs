//! "Did you mean …?": the closest of a few known names to a misspelt one, so a typo in a
//! field or tool name gets a one-step fix instead of a bare "unknown".

/// The known name closest to `name`, if it is close enough to be a likely typo: the same
/// name in another case, or a few edits away (swapped letters count as one edit).
pub(crate) fn closest<'a, I>(name: &str, known: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let wanted = name.to_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in known {
        if candidate == name {
            continue;
        }
        let distance = strsim::damerau_levenshtein(&wanted, &candidate.to_lowercase());
        let allowed = (wanted.chars().count().max(candidate.chars().count()) / 3).max(1);
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// `; did you mean `X`?` for a close known name, else nothing.
pub(crate) fn did_you_mean<'a, I>(name: &str, known: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    closest(name, known).map_or_else(String::new, |c| format!("; did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: [&str; 4] = ["permissions", "prompt", "params", "limits"];

    #[test]
    fn finds_typos_case_and_swaps() {
        assert_eq!(closest("permisions", FIELDS), Some("permissions"));
        assert_eq!(closest("edit", ["Edit", "Exit", "Read"]), Some("Edit"));
        assert_eq!(closest("Edti", ["Edit", "Exit", "Read"]), Some("Edit"));
        assert_eq!(closest("limit", FIELDS), Some("limits"));
    }

    #[test]
    fn says_nothing_for_unrelated_names() {
        assert_eq!(closest("colour", FIELDS), None);
        assert_eq!(closest("x", FIELDS), None);
        assert_eq!(did_you_mean("colour", FIELDS), "");
        assert_eq!(did_you_mean("prompts", FIELDS), "; did you mean `prompt`?");
    }
}
