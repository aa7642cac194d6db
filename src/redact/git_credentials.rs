//! Credentials a checkout leaves in the repository's git configuration are secrets of the
//! run even when no variable holds them: `actions/checkout` writes the job's token into
//! `.git/config` as `http.<url>.extraheader = AUTHORIZATION: basic base64(x-access-token:TOKEN)`
//! and does not export it, so a model that runs `cat .git/config` would otherwise print it.
//! Passwords in remote, submodule and `insteadOf` URLs are read too.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// The credential values the git configuration of the repository holding `workspace`
/// carries (none when it is not in a repository).
pub fn git_credentials(workspace: &Path) -> Vec<String> {
    let Ok(repo) = git2::Repository::discover(workspace) else {
        return Vec::new();
    };
    let Ok(config) = repo.config() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let Ok(entries) = config.entries(None) else {
        return found;
    };
    let _ = entries.for_each(|entry| {
        let (Ok(name), Ok(value)) = (entry.name(), entry.value()) else {
            return;
        };
        found.extend(from_entry(name, value));
    });
    found
}

/// The secrets one configuration entry holds (its name may hold one too: the base URL
/// of `url.<base>.insteadOf`).
fn from_entry(name: &str, value: &str) -> Vec<String> {
    let lower = name.to_ascii_lowercase();
    let mut found = url_password(name);
    if lower.starts_with("http.") && lower.ends_with(".extraheader") {
        found.extend(header_credentials(value));
    }
    if lower.ends_with(".url") || lower.ends_with(".insteadof") || lower.ends_with(".pushurl") {
        found.extend(url_password(value));
    }
    found
}

/// `AUTHORIZATION: basic BASE64` or `Authorization: Bearer TOKEN`: the header, its
/// credential, and for basic auth the decoded `user:password` and the password.
fn header_credentials(value: &str) -> Vec<String> {
    let mut found = vec![value.trim().to_owned()];
    let Some(credential) = value.split_whitespace().last() else {
        return found;
    };
    found.push(credential.to_owned());
    if !value.to_ascii_lowercase().contains("basic") {
        return found;
    }
    let decoded = STANDARD.decode(credential).ok();
    if let Some(pair) = decoded.and_then(|b| String::from_utf8(b).ok()) {
        if let Some((_, password)) = pair.split_once(':') {
            found.push(password.to_owned());
        }
        found.push(pair);
    }
    found
}

/// The password of `scheme://user:password@host/…` anywhere in `text`, as written and
/// percent-decoded.
fn url_password(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (start, _) in text.match_indices("://") {
        let rest = &text[start + 3..];
        let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        let Some((userinfo, _host)) = authority.rsplit_once('@') else {
            continue;
        };
        let password = userinfo.split_once(':').map_or(userinfo, |(_, p)| p);
        found.push(password.to_owned());
        let decoded = percent_encoding::percent_decode_str(password).decode_utf8_lossy();
        found.push(decoded.into_owned());
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_checkout_header_gives_the_token_in_every_form_it_is_written() {
        let token = "ghs_16C7e42F292c6912E7710c838347Ae178B4a";
        let b64 = STANDARD.encode(format!("x-access-token:{token}"));
        let found = from_entry(
            "http.https://github.com/.extraheader",
            &format!("AUTHORIZATION: basic {b64}"),
        );
        assert!(found.contains(&token.to_owned()), "{found:?}");
        assert!(found.contains(&b64), "{found:?}");
        let bearer = from_entry("http.extraheader", "Authorization: Bearer tok_abcdef123");
        assert!(bearer.contains(&"tok_abcdef123".to_owned()), "{bearer:?}");
    }

    #[test]
    fn passwords_in_urls_are_found_in_values_and_in_insteadof_names() {
        let cases = [
            (
                "remote.origin.url",
                "https://user:s3cr%40tpass@example.com/r.git",
                "s3cr@tpass",
            ),
            (
                "remote.origin.pushurl",
                "https://x-access-token:ghp_aaaabbbbcccc@github.com/o/r",
                "ghp_aaaabbbbcccc",
            ),
            (
                "submodule.lib.url",
                "https://oauth2:glpat-xyzxyzxyz@gitlab.com/g/lib.git",
                "glpat-xyzxyzxyz",
            ),
            (
                "url.https://x-access-token:ghs_insteadof123@github.com/.insteadof",
                "https://github.com/",
                "ghs_insteadof123",
            ),
            (
                "remote.up.url",
                "https://tokenonly12345@example.com/r.git",
                "tokenonly12345",
            ),
        ];
        for (name, value, secret) in cases {
            let found = from_entry(name, value);
            assert!(found.iter().any(|f| f == secret), "{name}: {found:?}");
        }
        assert!(from_entry("remote.origin.url", "https://github.com/o/r.git").is_empty());
        assert!(from_entry("user.email", "me@example.com").is_empty());
    }
}
