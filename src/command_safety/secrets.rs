//! Secret detection, one of cn-run's additions to Continue's evaluator: reading a file that looks
//! like a credential (`.env`, SSH keys, cloud credentials, `/etc/shadow`, `*.pem`, …) or expanding
//! a variable whose name looks like a secret (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`) needs
//! permission, even inside an otherwise read-only command.

/// `.env` variants that hold examples, not secrets.
const ENV_EXAMPLES: &[&str] = &["example", "sample", "template", "dist", "defaults"];

/// File names that are secrets wherever they are.
const SECRET_NAMES: &[&str] = &[
    ".envrc",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".vault-token",
    ".htpasswd",
    "credentials",
    "credentials.json",
    "credentials.toml",
    "credentials.tfrc.json",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "master.key",
];

/// Extensions of key and certificate stores.
const SECRET_EXTENSIONS: &[&str] = &["pem", "key", "p12", "pfx", "jks", "keystore", "ppk"];

/// Directories (and files) whose contents are credentials (public keys and `known_hosts`
/// excepted), matched as whole path components.
const SECRET_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".azure",
    ".docker/config.json",
    ".config/gcloud",
    ".config/gh",
];

/// System files that hold password hashes or privilege rules.
const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/master.passwd",
];

/// Whether a variable name looks like it holds a secret (the list the redactor uses too).
pub(crate) fn is_secret_var(name: &str) -> bool {
    crate::secret::is_secret_name(name)
}

/// Whether a word names (or globs) a secret file. The word may carry a prefix such as `@`
/// (curl), `--file=`, `HEAD:` (git) or `host:` (scp).
pub(crate) fn is_secret_path(word: &str) -> bool {
    if word.len() < 3 {
        return false;
    }
    let b = word.as_bytes();
    let after = |sep: u8| b.iter().rposition(|&c| c == sep).map_or(0, |k| k + 1);
    let eq = after(b'=');
    let word = &word[eq..];
    let word = word.strip_prefix('@').unwrap_or(word);
    if is_secret_file(word) || process_secret(word) {
        return true;
    }
    if word.contains(['*', '?', '[', '{']) && any_spelling_is_secret(word, 0) {
        return true;
    }
    let colon = word.bytes().rposition(|c| c == b':');
    colon.is_some_and(|k| is_secret_file(&word[k + 1..]))
}

fn is_secret_file(path: &str) -> bool {
    let b = path.as_bytes();
    let slash = b.iter().rposition(|&c| c == b'/' || c == b'\\');
    let name = &path[slash.map_or(0, |k| k + 1)..];
    let dot = name.bytes().rposition(|c| c == b'.');
    let Some(&first) = name.as_bytes().first() else {
        return false;
    };
    let named = match dot {
        // Only a few secret names have no dot; skip the list unless the first letter fits.
        None => {
            matches!(first.to_ascii_lowercase(), b'c' | b'i' | b'_')
                && SECRET_NAMES.iter().any(|s| name.eq_ignore_ascii_case(s))
        }
        Some(k) => {
            let ext = &name[k + 1..];
            if ext == "pub" {
                return false;
            }
            is_env_file(name)
                || SECRET_EXTENSIONS
                    .iter()
                    .any(|s| ext.eq_ignore_ascii_case(s))
                || SECRET_NAMES.iter().any(|s| name.eq_ignore_ascii_case(s))
        }
    };
    if named {
        return true;
    }
    if slash.is_none() || name == "known_hosts" {
        return false;
    }
    let hidden_dir = b.starts_with(b".") || b.windows(2).any(|w| w == b"/.");
    (hidden_dir && SECRET_DIRS.iter().any(|dir| has_component(path, dir)))
        || (path.starts_with("/etc/") && SYSTEM_SECRETS.iter().any(|file| path.starts_with(file)))
        || path.contains("/run/secrets/")
}

/// Files of a process that hold its environment, memory or arguments (`/proc/self/environ`,
/// `/proc/1/mem`, `/proc/*/cmdline`, `/proc/$$/environ`), or a whole process directory read
/// recursively.
fn process_secret(path: &str) -> bool {
    const FILES: &[&str] = &[
        "environ", "mem", "cmdline", "auxv", "maps", "root", "cwd", "fd",
    ];
    let Some(rest) = path.strip_prefix("/proc/") else {
        return false;
    };
    let mut parts = rest.split('/').filter(|p| !p.is_empty() && *p != ".");
    let Some(process) = parts.next() else {
        return true;
    };
    let glob = |p: &str| p.contains(['*', '?', '[']);
    let is_process = process.bytes().all(|c| c.is_ascii_digit())
        || matches!(process, "self" | "thread-self")
        || glob(process)
        || process.contains('$');
    let file = match parts.next() {
        Some("task") => parts.nth(1),
        other => other,
    };
    is_process
        && file.is_none_or(|f| {
            FILES
                .iter()
                .any(|known| super::paths::glob_matches(f, known))
        })
}

/// Whether some spelling of a globbed or brace-expanded word names a secret: braces are
/// expanded (a few levels), and each glob component is matched against the secret names and
/// directories. A component that is nothing but wildcards (`*`) matches no dotted name, as in
/// the shell, and is not taken to name a secret on its own.
fn any_spelling_is_secret(word: &str, depth: u8) -> bool {
    if let Some((head, alternatives, tail)) = first_brace(word) {
        return depth < 3
            && alternatives.split(',').take(16).any(|alt| {
                let spelled = format!("{head}{alt}{tail}");
                is_secret_file(&spelled)
                    || process_secret(&spelled)
                    || any_spelling_is_secret(&spelled, depth + 1)
            });
    }
    if SYSTEM_SECRETS
        .iter()
        .any(|file| super::paths::glob_matches(word, file))
    {
        return true;
    }
    let parts: Vec<&str> = word.split('/').collect();
    let literal = |p: &str| p.bytes().any(|c| !matches!(c, b'*' | b'?' | b'[' | b']'));
    let glob = super::paths::glob_matches;
    if let Some(name) = parts.last().filter(|n| literal(n)) {
        let ext_hit = SECRET_EXTENSIONS
            .iter()
            .any(|ext| glob(name, &format!("x.{ext}")));
        let env_hit = [".env", ".env.local", ".env.production", "prod.env"]
            .iter()
            .any(|e| glob(name, e));
        if ext_hit || env_hit || SECRET_NAMES.iter().any(|n| glob(name, n)) {
            return true;
        }
    }
    SECRET_DIRS.iter().any(|dir| {
        let want: Vec<&str> = dir.split('/').collect();
        parts.windows(want.len()).any(|w| {
            w.iter()
                .zip(&want)
                .all(|(have, want)| literal(have) && glob(have, want))
        })
    })
}

/// The first `{a,b}` group of a word: the text before it, its alternatives and the text after.
fn first_brace(word: &str) -> Option<(&str, &str, &str)> {
    let open = word.find('{')?;
    let close = open + word[open..].find('}')?;
    let inner = &word[open + 1..close];
    inner
        .contains(',')
        .then(|| (&word[..open], inner, &word[close + 1..]))
}

/// Whether `dir` occurs in `path` as whole components (`~/.ssh`, `a/.ssh/b`, not `x.ssh`).
fn has_component(path: &str, dir: &str) -> bool {
    path.match_indices(dir).any(|(k, _)| {
        let before = k == 0 || path.as_bytes()[k - 1] == b'/';
        let after = path
            .as_bytes()
            .get(k + dir.len())
            .is_none_or(|&c| c == b'/');
        before && after
    })
}

/// `.env`, `.env.local`, `.env*`, `.env~` (an editor's backup), `prod.env`; not `.env.example`.
fn is_env_file(name: &str) -> bool {
    if let Some(rest) = name.strip_prefix(".env") {
        return match rest.strip_prefix('.') {
            Some(suffix) => !ENV_EXAMPLES.iter().any(|s| suffix.eq_ignore_ascii_case(s)),
            None => rest.is_empty() || rest.starts_with(['*', '~']),
        };
    }
    name.len() > 4 && name.ends_with(".env")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_variable_names() {
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "aws_secret",
            "DB_PASSWORD",
            "MYPASSWD",
        ] {
            assert!(is_secret_var(name), "{name}");
        }
        for name in [
            "HOME",
            "PATH",
            "KEYBOARD",
            "TOKENIZER_DIR",
            "CARGO_TARGET_DIR",
        ] {
            assert!(!is_secret_var(name), "{name}");
        }
    }

    #[test]
    fn secret_files() {
        for path in [
            ".env",
            "./app/.env.production",
            ".env*",
            "prod.env",
            "~/.ssh/id_rsa",
            "/home/u/.ssh/config",
            "~/.aws/credentials",
            "~/.ssh",
            "/proc/self/environ",
            "/var/run/secrets/kubernetes.io/serviceaccount/token",
            "~/.config/gh/hosts.yml",
            "/etc/shadow",
            "server.pem",
            "*.key",
            "@.env",
            "--env-file=.env",
            "HEAD:.env",
            "user@host:.ssh/id_ed25519",
        ] {
            assert!(is_secret_path(path), "{path}");
        }
        for path in [
            ".env.example",
            "~/.ssh/id_rsa.pub",
            "~/.ssh/known_hosts",
            "/etc/passwd",
            "README.md",
            "src/env.rs",
            "environment.yml",
            "keys.rs",
            "src/x.ssh",
            "docs/.sshd/x",
        ] {
            assert!(!is_secret_path(path), "{path}");
        }
    }
}
