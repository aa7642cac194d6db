//! Tool names as offered to the model: `mcp__<server>__<tool>`, limited to `[A-Za-z0-9_-]`
//! and 64 characters, the strictest rule among the providers (OpenAI's).
//!
//! A name that had to be shortened ends in a short hash of the full name, so two long tool
//! names that share a prefix still get different names; the hub keeps the real name.

/// The longest function name OpenAI accepts.
pub(crate) const MAX_NAME_LEN: usize = 64;

/// `name` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub(crate) use crate::safe_name::safe_word as sanitize;

/// The name the model sees for `tool` of `server`.
pub(crate) fn exposed_name(server: &str, tool: &str) -> String {
    let full = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if full.len() <= MAX_NAME_LEN {
        return full;
    }
    let suffix = format!("_{:08x}", fnv1a(&format!("{server}\u{0}{tool}")));
    // Every character is ASCII, so byte offsets are character offsets.
    let keep = MAX_NAME_LEN - suffix.len();
    format!("{}{suffix}", &full[..keep])
}

/// Make `name` different from every name in `taken` by appending `_2`, `_3`, … (keeping
/// within the length limit).
pub(crate) fn unique(name: String, taken: &std::collections::HashSet<String>) -> String {
    if !taken.contains(&name) {
        return name;
    }
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            let keep = name.len().min(MAX_NAME_LEN - suffix.len());
            format!("{}{suffix}", &name[..keep])
        })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(name)
}

/// 32-bit FNV-1a: small, stable across builds and platforms.
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5_u32, |hash, b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_prefixed_and_sanitised() {
        assert_eq!(
            exposed_name("github", "create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(
            exposed_name("my server", "files.read"),
            "mcp__my_server__files_read"
        );
    }

    #[test]
    fn long_names_are_cut_to_64_and_stay_distinct() {
        let a = exposed_name("server", &format!("{}_alpha", "x".repeat(80)));
        let b = exposed_name("server", &format!("{}_beta", "x".repeat(80)));
        assert_eq!(a.len(), MAX_NAME_LEN);
        assert_eq!(b.len(), MAX_NAME_LEN);
        assert_ne!(a, b);
        assert!(a.starts_with("mcp__server__xxx"));
    }

    #[test]
    fn clashes_get_a_numeric_suffix() {
        let taken = ["mcp__s__a_b".to_owned()].into_iter().collect();
        assert_eq!(unique("mcp__s__a_b".into(), &taken), "mcp__s__a_b_2");
        assert_eq!(unique("mcp__s__c".into(), &taken), "mcp__s__c");
    }
}
