//! Per-file line counts of the run's patch, read once as diff.patch is written and carried
//! by the `changes.recorded` event, from which the step summary lists the changed files
//! (result.json carries only the totals). One pass over git's format, no repository.
//!
//! Lines are counted by the sizes each hunk header announces, so a removed line that
//! itself starts with `--- ` or `diff --git` is still counted as content. Paths come from
//! the `---`/`+++` lines, or from the `diff --git` line for files without them (binary or
//! mode-only changes), with git's C-style quoting undone.

pub use crate::events::{FileChange, Kind};

/// Where the reader is inside one file's section.
enum State {
    /// Extended header lines, before any hunk.
    Header,
    /// Inside a hunk, with this many old and new lines still to come.
    Hunk { old: usize, new: usize },
    /// Between hunks, or after binary data: only `@@` or the next file matter.
    Between,
}

/// The files of a patch in git's format, in patch order.
pub fn parse(patch: &[u8]) -> Vec<FileChange> {
    let mut files: Vec<FileChange> = Vec::new();
    let mut state = State::Between;
    for line in patch.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let State::Hunk { old, new } = &mut state {
            match line.first() {
                Some(b'+') => *new = new.saturating_sub(1),
                Some(b'-') => *old = old.saturating_sub(1),
                Some(b'\\') => {}
                _ => {
                    *old = old.saturating_sub(1);
                    *new = new.saturating_sub(1);
                }
            }
            if let Some(f) = files.last_mut() {
                match line.first() {
                    Some(b'+') => f.insertions += 1,
                    Some(b'-') => f.deletions += 1,
                    _ => {}
                }
            }
            if *old == 0 && *new == 0 {
                state = State::Between;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"diff --git ") {
            files.push(FileChange {
                path: header_path(rest),
                kind: Kind::Modified,
                binary: false,
                insertions: 0,
                deletions: 0,
            });
            state = State::Header;
            continue;
        }
        let Some(f) = files.last_mut() else { continue };
        if line.starts_with(b"@@ ") {
            if let Some((old, new)) = hunk_sizes(line) {
                state = State::Hunk { old, new };
            }
            continue;
        }
        if matches!(state, State::Header) {
            header_line(f, line, &mut state);
        }
    }
    files
}

/// One extended header line of the file `f`.
fn header_line(f: &mut FileChange, line: &[u8], state: &mut State) {
    if line.starts_with(b"new file mode") {
        f.kind = Kind::Added;
    } else if line.starts_with(b"deleted file mode") {
        f.kind = Kind::Deleted;
    } else if line.starts_with(b"GIT binary patch") || line.starts_with(b"Binary files ") {
        f.binary = true;
        *state = State::Between;
    } else if let Some(p) = line.strip_prefix(b"+++ ").and_then(|p| side_path(p, b"b/")) {
        f.path = p;
    } else if let Some(p) = line.strip_prefix(b"--- ").and_then(|p| side_path(p, b"a/")) {
        f.path = p;
    }
}

/// The path of a `---`/`+++` line (`None` for /dev/null).
fn side_path(p: &[u8], prefix: &[u8]) -> Option<String> {
    let p = p.strip_suffix(b"\t").unwrap_or(p);
    if p == b"/dev/null" {
        return None;
    }
    let bytes = if p.first() == Some(&b'"') {
        unquote(p).0
    } else {
        p.to_vec()
    };
    let bytes = bytes.strip_prefix(prefix).unwrap_or(&bytes);
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// The path of a `diff --git a/X b/X` line (the new side's).
fn header_path(rest: &[u8]) -> String {
    let new_side: Vec<u8> = if rest.first() == Some(&b'"') {
        let (_, used) = unquote(rest);
        let tail = rest.get(used..).unwrap_or_default();
        let tail = tail.strip_prefix(b" ").unwrap_or(tail);
        if tail.first() == Some(&b'"') {
            unquote(tail).0
        } else {
            tail.to_vec()
        }
    } else if rest.last() == Some(&b'"') {
        let start = rest
            .windows(2)
            .position(|w| w == b" \"")
            .map_or(0, |i| i + 1);
        unquote(&rest[start..]).0
    } else {
        // Unquoted and (without rename detection) the same path twice: split in the middle.
        let half = rest.len().saturating_sub(1) / 2;
        rest.get(half + 1..).unwrap_or_default().to_vec()
    };
    let path = new_side.strip_prefix(b"b/").unwrap_or(&new_side);
    String::from_utf8_lossy(path).into_owned()
}

/// Undo git's C-style quoting of `"..."`; returns the bytes and how many input bytes the
/// quoted string took.
fn unquote(s: &[u8]) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(&b) = s.get(i) {
        i += 1;
        match b {
            b'"' => return (out, i),
            b'\\' => {
                let Some(&e) = s.get(i) else { break };
                i += 1;
                let octal = |b: u8| (b'0'..=b'7').contains(&b);
                match e {
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        for _ in 0..2 {
                            match s.get(i) {
                                Some(&d) if octal(d) => {
                                    v = v * 8 + u32::from(d - b'0');
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        out.push(u8::try_from(v).unwrap_or(b'?'));
                    }
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b't' => out.push(b'\t'),
                    b'n' => out.push(b'\n'),
                    b'v' => out.push(11),
                    b'f' => out.push(12),
                    b'r' => out.push(b'\r'),
                    other => out.push(other),
                }
            }
            other => out.push(other),
        }
    }
    (out, i)
}

/// The old and new line counts of a hunk header `@@ -a[,b] +c[,d] @@`.
fn hunk_sizes(line: &[u8]) -> Option<(usize, usize)> {
    let text = std::str::from_utf8(line.get(3..)?).ok()?;
    let mut parts = text.split(' ');
    let size = |part: Option<&str>, sign: char| -> Option<usize> {
        let range = part?.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => range.parse::<usize>().ok().map(|_| 1),
        }
    };
    Some((size(parts.next(), '-')?, size(parts.next(), '+')?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(path: &str, kind: Kind, binary: bool, ins: usize, del: usize) -> FileChange {
        FileChange {
            path: path.to_owned(),
            kind,
            binary,
            insertions: ins,
            deletions: del,
        }
    }

    #[test]
    fn counts_lines_per_file_by_hunk_sizes() {
        // The removed lines look like file headers; the hunk sizes say they are content.
        let patch = "diff --git a/src/lib.rs b/src/lib.rs\nindex 1111111..2222222 100644\n\
--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,4 +1,3 @@\n keep\n---- a/fake\n-diff --git a/x b/x\n+new\n \n\
@@ -10 +9,2 @@\n-old\n+one\n+two\n\\ No newline at end of file\n\
diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\nindex 3333333..0000000\n\
--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n\
diff --git a/new dir/a b.txt b/new dir/a b.txt\nnew file mode 100644\nindex 0000000..4444444\n\
--- /dev/null\n+++ b/new dir/a b.txt\t\n@@ -0,0 +1 @@\n+hello\n";
        assert_eq!(
            parse(patch.as_bytes()),
            [
                one("src/lib.rs", Kind::Modified, false, 3, 3),
                one("gone.txt", Kind::Deleted, false, 0, 2),
                one("new dir/a b.txt", Kind::Added, false, 1, 0),
            ]
        );
    }

    #[test]
    fn binary_mode_only_and_quoted_paths() {
        let patch = "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..5555555\n\
GIT binary patch\nliteral 4\nLcmZ?d00001\n\nliteral 0\nHcmV?d00001\n\n\
diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n\
diff --git \"a/caf\\303\\251 \\\"q\\\".txt\" \"b/caf\\303\\251 \\\"q\\\".txt\"\nindex 6666666..7777777 100644\n\
@@ -1 +1 @@\n-x\n+y\n";
        assert_eq!(
            parse(patch.as_bytes()),
            [
                one("logo.png", Kind::Added, true, 0, 0),
                one("run.sh", Kind::Modified, false, 0, 0),
                one("caf\u{e9} \"q\".txt", Kind::Modified, false, 1, 1),
            ]
        );
    }

    #[test]
    fn an_empty_patch_has_no_files() {
        assert!(parse(b"").is_empty());
    }
}
