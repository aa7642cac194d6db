//! Path judgements shared by the rules: whether a path is the root, the home directory or a
//! whole system directory (for `rm -rf`), inside a protected system tree, a disk device, or
//! outside the workspace. Paths are judged lexically: `//usr/./bin/..` is `/usr`; a word made
//! only of expansions, such as `"$DIR"/`, is judged as if the variables were empty, because that
//! is what the shell does when they are unset.

use std::borrow::Cow;

/// Top-level directories whose removal wrecks the system or the user's data.
const SYSTEM_TOP: &[&str] = &[
    "Applications",
    "Library",
    "System",
    "Users",
    "Volumes",
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "opt",
    "private",
    "proc",
    "root",
    "run",
    "sbin",
    "snap",
    "srv",
    "sys",
    "usr",
    "var",
];

/// Trees in which deleting even one file is refused.
const PROTECTED: &[&str] = &[
    "System", "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "proc", "sbin", "sys", "usr",
];

/// Device files that are harmless to write to.
const HARMLESS_DEVICES: &[&str] = &["null", "zero", "stdout", "stderr", "tty", "full", "random"];

/// Where a write would land.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum WriteTarget {
    Workspace,
    GitInternals,
    Harmless,
    Device,
    Outside,
}

/// The word with `$NAME`/`${…}` expansions removed, when it has any; `$HOME` becomes `~`.
pub(crate) fn without_expansions(word: &str) -> Cow<'_, str> {
    if !word.contains(['$', '`']) {
        return Cow::Borrowed(word);
    }
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(pos) = rest.find(['$', '`']) {
        out.push_str(&rest[..pos]);
        let (name, skip) = expansion_at(&rest[pos..]);
        if name == "HOME" {
            out.push('~');
        }
        rest = &rest[pos + skip..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A program word with its expansions resolved to one thing they may be: `$IFS` (in any
/// spelling, `${IFS}`, `${IFS%?}`) a blank, anything else (`$X`, `${X}`, `$(…)`, `` `…` ``)
/// empty.
pub(crate) fn blank_ifs(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(pos) = rest.find(['$', '`']) {
        out.push_str(&rest[..pos]);
        let (name, skip) = expansion_at(&rest[pos..]);
        if name.starts_with("IFS") {
            out.push(' ');
        }
        rest = &rest[pos + skip..];
    }
    out.push_str(rest);
    out
}

/// The expansion at the start of `text` (which starts with `$` or a backtick): its variable
/// name (empty for a substitution) and its length.
fn expansion_at(text: &str) -> (&str, usize) {
    let closing = |open: usize, close: char| {
        text[open..]
            .find(close)
            .map_or((text.len(), text.len()), |k| (open + k, open + k + 1))
    };
    if text.starts_with('`') {
        return ("", closing(1, '`').1);
    }
    let rest = &text[1..];
    if rest.starts_with('(') {
        let mut depth = 0usize;
        for (k, c) in rest.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth <= 1 => return ("", k + 2),
                ')' => depth -= 1,
                _ => {}
            }
        }
        return ("", text.len());
    }
    if rest.starts_with('{') {
        let (end, skip) = closing(2, '}');
        return (&text[2..end.max(2)], skip);
    }
    let len = rest
        .bytes()
        .position(|c| !(c.is_ascii_alphanumeric() || c == b'_'))
        .unwrap_or(rest.len());
    (&rest[..len], len + 1)
}

/// Whether a word's text is made only of expansions (`$X`, `"$(…)"`, `` `…` ``), so that it
/// may stand for any path, `/` and `~` included.
pub(crate) fn only_expansions(word: &str) -> bool {
    !word.is_empty() && word.starts_with(['$', '`']) && blank_ifs(word).trim().is_empty()
}

/// Whether a glob `pattern` (`*`, `?`, `[…]`) may match `name`. Like the shell, a leading
/// wildcard does not match a leading dot.
pub(crate) fn glob_matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    glob_at(pattern.as_bytes(), name.as_bytes())
}

/// One pass with a single backtrack point (the last `*`), so the time is at most the
/// product of the two lengths: a recursive matcher is exponential in the number of stars,
/// and a 40-character command (`x <<****…`) held the evaluator for minutes.
fn glob_at(p: &[u8], n: &[u8]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    // Where to resume after the last `*`: the pattern after it, and the name byte it
    // would take next.
    let mut resume: Option<(usize, usize)> = None;
    while ni < n.len() {
        if let Some(step) = step_at(&p[pi..], n[ni]) {
            match step {
                Step::Star => {
                    resume = Some((pi + 1, ni));
                    pi += 1;
                }
                Step::Byte(len) => {
                    pi += len;
                    ni += 1;
                }
            }
            continue;
        }
        let Some((after, taken)) = resume else {
            return false;
        };
        resume = Some((after, taken + 1));
        (pi, ni) = (after, taken + 1);
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// What the pattern's next element does with the name byte `c`.
enum Step {
    /// A `*`: matches any run, decided by backtracking.
    Star,
    /// Matches `c`, and is this many pattern bytes long.
    Byte(usize),
}

/// The pattern's next element if it can take `c` (`None`: a mismatch, or no pattern left).
fn step_at(p: &[u8], c: u8) -> Option<Step> {
    match *p.first()? {
        b'*' => Some(Step::Star),
        b'?' => Some(Step::Byte(1)),
        b'[' => match p.iter().position(|&b| b == b']') {
            Some(end) if end > 1 => {
                let (negate, set) = match p[1] {
                    b'!' | b'^' => (true, &p[2..end]),
                    _ => (false, &p[1..end]),
                };
                (class_has(set, c) != negate).then_some(Step::Byte(end + 1))
            }
            _ => (c == b'[').then_some(Step::Byte(1)),
        },
        b => (b == c).then_some(Step::Byte(1)),
    }
}

/// Whether a bracket class (`a-z0`) holds `c`.
fn class_has(set: &[u8], c: u8) -> bool {
    let mut k = 0;
    while k < set.len() {
        if k + 2 < set.len() && set[k + 1] == b'-' {
            if (set[k]..=set[k + 2]).contains(&c) {
                return true;
            }
            k += 3;
        } else {
            if set[k] == c {
                return true;
            }
            k += 1;
        }
    }
    false
}

/// The components of an absolute path after resolving `.`, `..`, repeated slashes and a trailing
/// `*`; `None` for a relative path.
fn components(path: &str) -> Option<Vec<&str>> {
    let rest = path.strip_prefix('/')?;
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." | "*" => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    Some(parts)
}

/// `/`, `/*`, `~`, `~/`, `$HOME`, a whole top-level system directory such as `/usr` or
/// `/etc/`, or a Windows drive root.
pub(crate) fn is_root_level(path: &str) -> bool {
    if let Some(rest) = home_rest(path) {
        return rest.trim_matches(['/', '*', '.']).is_empty() || !rest.starts_with('/');
    }
    if is_drive_root(path) {
        return true;
    }
    match components(path) {
        Some(parts) => match parts.as_slice() {
            [] => true,
            [top] => SYSTEM_TOP.iter().any(|dir| glob_matches(top, dir)),
            _ => false,
        },
        None => false,
    }
}

/// A path inside one of the protected system trees (`/etc/passwd`, `/usr/bin/ls`).
pub(crate) fn is_protected(path: &str) -> bool {
    components(path).is_some_and(|parts| {
        parts
            .first()
            .is_some_and(|top| PROTECTED.iter().any(|dir| glob_matches(top, dir)))
    })
}

/// Classifies the target of a write (a redirection, `tee`, `-o FILE`).
pub(crate) fn write_target(path: &str) -> WriteTarget {
    if let Some(device) = path.strip_prefix("/dev/") {
        let harmless = HARMLESS_DEVICES.contains(&device)
            || device.starts_with("fd/")
            || device.starts_with("pts/");
        return if harmless {
            WriteTarget::Harmless
        } else {
            WriteTarget::Device
        };
    }
    if leaves_workspace(path) {
        return WriteTarget::Outside;
    }
    let inside_git = path
        .trim_start_matches("./")
        .split('/')
        .any(|part| part == ".git");
    if inside_git {
        WriteTarget::GitInternals
    } else {
        WriteTarget::Workspace
    }
}

/// Whether a directory path has a `.git` component, in any spelling a glob may give it
/// (`.git`, `sub/.git/hooks`, `.g*`).
pub(crate) fn names_git_dir(path: &str) -> bool {
    path.split(['/', '\\'])
        .any(|part| part.starts_with('.') && glob_matches(part, ".git"))
}

/// An absolute path, a home path, or a relative path that climbs above where it starts.
pub(crate) fn leaves_workspace(path: &str) -> bool {
    descend(path, 0).is_none()
}

/// The directory depth below the workspace root after following the relative `path` from
/// `depth`; `None` when the path is absolute, starts at home, or climbs above the root.
pub(crate) fn descend(path: &str, mut depth: i32) -> Option<i32> {
    if path.starts_with(['/', '\\']) || home_rest(path).is_some() || is_drive_root(path) {
        return None;
    }
    for part in path.split('/') {
        match part {
            ".." => depth -= 1,
            "" | "." => {}
            _ => depth += 1,
        }
        if depth < 0 {
            return None;
        }
    }
    Some(depth)
}

/// What follows the home directory in `~…`, `$HOME…` or `${HOME}…` (`~user` gives `user`).
fn home_rest(path: &str) -> Option<&str> {
    if let Some(rest) = path.strip_prefix('~') {
        return Some(rest);
    }
    ["$HOME", "${HOME}"].iter().find_map(|prefix| {
        path.strip_prefix(prefix)
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// `C:`, `C:\`, `C:/`, `C:\*`.
fn is_drive_root(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && path[2..].trim_matches(['\\', '/', '*']).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The glob matcher agrees with the shell on these, and stars cost no more than the
    /// lengths: the fuzzer's `kc1t <<****…` (32 stars) and longer ones finish (the recursive
    /// matcher this replaced took about ×3 per star: 58 s at 12).
    #[test]
    fn globs_match_as_the_shell_does_in_time_linear_in_the_stars() {
        for (pattern, name, hit) in [
            (".env*", ".env.local", true),
            ("*", ".env", false),
            (".e?v", ".env", true),
            (".en[vw]", ".env", true),
            (".en[!v]", ".env", false),
            ("[", "[", true),
            ("[]", "[]", true),
            ("*.pem", "key.pem", true),
            ("*.pem", "key.pem.bak", false),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("**", "", true),
            ("?", "", false),
            ("id_*", "id_rsa", true),
            ("*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
        ] {
            assert_eq!(glob_matches(pattern, name), hit, "{pattern} ~ {name}");
        }
        let stars = "*".repeat(64);
        assert!(!glob_matches(&format!("{stars}\u{2}"), "credentials.json"));
        assert!(glob_matches(&format!("{stars}json"), "credentials.json"));
        let long = format!("kc1t <<{}\u{2}", "*".repeat(40));
        assert_eq!(crate::command_safety::one_reading_holds(&long), Ok(()));
    }

    #[test]
    fn root_level_paths() {
        for path in [
            "/", "/*", "//", "/.", "~", "~/", "~/*", "$HOME", "/usr", "/etc/", "/usr/../", "C:\\",
        ] {
            assert!(is_root_level(path), "{path}");
        }
        for path in [
            "/usr/local/src/x",
            "target",
            "./",
            "~/.ssh/id_rsa",
            "/tmp/build",
            "$HOME/x",
        ] {
            assert!(!is_root_level(path), "{path}");
        }
    }

    #[test]
    fn protected_trees() {
        assert!(is_protected("/etc/passwd"));
        assert!(is_protected("/usr/bin/"));
        assert!(!is_protected("/var/log/auth.log"));
        assert!(!is_protected("etc/passwd"));
    }

    #[test]
    fn write_targets() {
        assert_eq!(write_target("out.txt"), WriteTarget::Workspace);
        assert_eq!(write_target("a/../b.txt"), WriteTarget::Workspace);
        assert_eq!(write_target("../x"), WriteTarget::Outside);
        assert_eq!(write_target("/etc/hosts"), WriteTarget::Outside);
        assert_eq!(write_target("~/.bashrc"), WriteTarget::Outside);
        assert_eq!(write_target("/dev/null"), WriteTarget::Harmless);
        assert_eq!(write_target("/dev/sda"), WriteTarget::Device);
        assert_eq!(
            write_target(".git/hooks/pre-commit"),
            WriteTarget::GitInternals
        );
    }

    #[test]
    fn expansions_are_judged_as_empty() {
        assert_eq!(without_expansions("$DIR/"), "/");
        assert_eq!(without_expansions("${A}x$B"), "x");
        assert_eq!(without_expansions("plain"), "plain");
        assert_eq!(without_expansions("$HOME/"), "~/");
        assert_eq!(without_expansions("${HOME}/src"), "~/src");
    }
}
