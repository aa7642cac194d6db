//! Finding a program in the table by the name a command gives it: matched
//! case-insensitively (`SUDO`), by its last path component (`/bin/rm`) and without `.exe`; a
//! versioned interpreter (`python3.12`) falls back to its base name, `mkfs.*` is a disk
//! tool. A program named by a path outside the system's own directories is noted.

use super::catalog::DISK;
use super::programs::{Kind, PROGRAMS};

/// Directories whose programs are the system's own, so naming them by path is no risk.
const SYSTEM_BIN_DIRS: &[&str] = &[
    "/bin/",
    "/sbin/",
    "/usr/bin/",
    "/usr/sbin/",
    "/usr/local/bin/",
];

/// A program name, lower-cased into a small buffer.
pub(super) struct ProgramName {
    buf: [u8; 32],
    len: usize,
    pub(super) by_path: bool,
}

impl ProgramName {
    pub(super) fn parse(text: &str) -> Option<Self> {
        let cut = text.bytes().rposition(|c| c == b'/' || c == b'\\');
        let (dir, base) = match cut {
            Some(k) => (&text[..=k], &text[k + 1..]),
            None => ("", text),
        };
        let base = match base.len().checked_sub(4) {
            Some(cut) if base.is_char_boundary(cut) && base[cut..].eq_ignore_ascii_case(".exe") => {
                &base[..cut]
            }
            _ => base,
        };
        if base.is_empty() || base.len() > 32 {
            return None;
        }
        let mut buf = [0u8; 32];
        buf[..base.len()].copy_from_slice(base.as_bytes());
        buf[..base.len()].make_ascii_lowercase();
        Some(Self {
            buf,
            len: base.len(),
            by_path: !dir.is_empty() && !SYSTEM_BIN_DIRS.contains(&dir),
        })
    }

    pub(super) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// `BUCKETS[c]..BUCKETS[c + 1]` is the range of `PROGRAMS` whose names start with byte `c`,
/// computed at compile time from the sorted table.
const BUCKETS: [u16; 257] = buckets();

const fn buckets() -> [u16; 257] {
    let mut out = [0u16; 257];
    let mut byte = 0;
    let mut k = 0;
    while byte < 256 {
        while k < PROGRAMS.len() && (PROGRAMS[k].0.as_bytes()[0] as usize) < byte {
            k += 1;
        }
        out[byte] = k as u16;
        byte += 1;
    }
    out[256] = PROGRAMS.len() as u16;
    out
}

fn find(name: &str) -> Option<Kind> {
    let first = usize::from(*name.as_bytes().first()?);
    let bucket = &PROGRAMS[usize::from(BUCKETS[first])..usize::from(BUCKETS[first + 1])];
    bucket
        .iter()
        .find(|(entry, _)| entry.len() == name.len() && *entry == name)
        .map(|(_, kind)| *kind)
}

pub(super) fn lookup(name: &str) -> Option<Kind> {
    if let Some(kind) = find(name) {
        return Some(kind);
    }
    if name.starts_with("mkfs.") {
        return Some(Kind::Fixed(&DISK));
    }
    let unversioned = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    (unversioned.len() < name.len() && !unversioned.is_empty())
        .then(|| find(unversioned))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command_safety::programs::Kind::{Fixed, Lang};

    #[test]
    fn the_program_table_is_sorted_and_unique() {
        for pair in PROGRAMS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        for (name, _) in PROGRAMS {
            assert!(
                find(name).is_some(),
                "{name} is not found through its bucket"
            );
        }
    }

    #[test]
    fn names_are_found_by_case_path_suffix_and_version() {
        for (text, expected) in [
            ("SUDO", "sudo"),
            ("/usr/bin/rm", "rm"),
            ("powershell.exe", "powershell"),
            ("C:\\Windows\\cmd.exe", "cmd"),
        ] {
            let name = ProgramName::parse(text).map(|n| n.as_str().to_owned());
            assert_eq!(name.as_deref(), Some(expected));
        }
        assert!(ProgramName::parse("/usr/bin/rm").is_some_and(|n| !n.by_path));
        assert!(ProgramName::parse("./rm").is_some_and(|n| n.by_path));
        assert!(matches!(lookup("python3.12"), Some(Lang)));
        assert!(matches!(lookup("mkfs.ext4"), Some(Fixed(rule)) if rule.id == "critical.disk"));
        assert!(lookup("python-evil").is_none());
    }
}
