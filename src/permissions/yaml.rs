//! Reads a repository `permissions.yaml` in Continue's format: top-level `allow`, `ask` and
//! `exclude`, each a list of rule patterns.
//!
//! Unlike Continue, which silently ignores a file it cannot read, a malformed file is an error: a
//! CI user must know when their policy file is not applied.

use serde::Deserialize;

use super::pattern::parse_rule_pattern;
use super::types::{Permission, PolicyError, RuleSpec};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionsFile {
    #[serde(default)]
    allow: Option<Vec<String>>,
    #[serde(default)]
    ask: Option<Vec<String>>,
    #[serde(default)]
    exclude: Option<Vec<String>>,
}

/// The file's rules, ordered exclude…, ask…, allow… (each list keeping its own order). An empty
/// file (or one holding only comments) has no rules.
pub fn parse_permissions_yaml(text: &str) -> Result<Vec<RuleSpec>, PolicyError> {
    let file: Option<PermissionsFile> =
        serde_yaml::from_str(text).map_err(|err| PolicyError::File(err.to_string()))?;
    let file = file.unwrap_or_default();
    let lists = [
        (Permission::Exclude, file.exclude),
        (Permission::Ask, file.ask),
        (Permission::Allow, file.allow),
    ];
    let mut rules = Vec::new();
    for (permission, list) in lists {
        for pattern in list.unwrap_or_default() {
            parse_rule_pattern(&pattern).map_err(|err| PolicyError::File(err.to_string()))?;
            rules.push(RuleSpec::new(pattern, permission));
        }
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_read_strictest_first() {
        let rules = parse_permissions_yaml("allow: [Read]\nexclude:\n  - Bash(rm *)\nask: []\n")
            .expect("valid file");
        let got: Vec<_> = rules
            .iter()
            .map(|r| (r.pattern.as_str(), r.permission))
            .collect();
        assert_eq!(
            got,
            [
                ("Bash(rm *)", Permission::Exclude),
                ("Read", Permission::Allow)
            ]
        );
    }

    #[test]
    fn empty_or_comment_only_files_have_no_rules() {
        assert_eq!(parse_permissions_yaml(""), Ok(vec![]));
        assert_eq!(
            parse_permissions_yaml("# cn tool permissions\n"),
            Ok(vec![])
        );
        assert_eq!(parse_permissions_yaml("allow:\n"), Ok(vec![]));
    }

    #[test]
    fn malformed_files_are_errors() {
        for bad in [
            "allow: Read",
            "deny: [Bash]",
            "- Read",
            "allow: [Write(unclosed]",
        ] {
            assert!(
                parse_permissions_yaml(bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
    }
}
