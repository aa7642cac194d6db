//! Repository-relative paths as the checkpointer keeps them: strings (`/`-separated, so
//! prefixes, folders and sorting stay plain string work) that hold any file name byte for
//! byte. A name that is not UTF-8 (Latin-1 from an old archive, a test fixture) is not
//! made lossy — that dropped the file from the snapshot and from diff.patch without a word
//! — but escaped: each byte that is not part of valid UTF-8 becomes [`ESCAPE`] followed by
//! a character standing for it, and [`ESCAPE`] itself is doubled. Where a path meets the
//! file system or libgit2 it is turned back into its exact bytes ([`bytes`], [`os`]).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

/// Marks an escaped byte (a private-use character, never `/`).
const ESCAPE: char = '\u{10FFFD}';
/// Escaped byte `b` is the character `BYTES + b`.
const BYTES: u32 = 0x10_FE00;

/// A file name's or path's bytes as a relative path string.
pub(crate) fn from_bytes(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains(ESCAPE) => Cow::Borrowed(text),
        _ => Cow::Owned(escape(bytes)),
    }
}

/// A path (a file name read from a folder) as a relative path string.
pub(crate) fn from_os(name: &OsStr) -> Cow<'_, str> {
    from_bytes(name.as_bytes())
}

fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            out.push(c);
            if c == ESCAPE {
                out.push(ESCAPE);
            }
        }
        for b in chunk.invalid() {
            out.push(ESCAPE);
            out.push(char::from_u32(BYTES + u32::from(*b)).unwrap_or(ESCAPE));
        }
    }
    out
}

/// The exact bytes of relative path `rel`.
pub(crate) fn bytes(rel: &str) -> Cow<'_, [u8]> {
    if !rel.contains(ESCAPE) {
        return Cow::Borrowed(rel.as_bytes());
    }
    let mut out = Vec::with_capacity(rel.len());
    let mut chars = rel.chars();
    while let Some(c) = chars.next() {
        if c != ESCAPE {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some(ESCAPE) | None => out.extend_from_slice(ESCAPE.to_string().as_bytes()),
            Some(b) => out.push((u32::from(b) - BYTES) as u8),
        }
    }
    Cow::Owned(out)
}

/// Relative path `rel` as a path, byte for byte.
pub(crate) fn os(rel: &str) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(&bytes(rel)))
}

/// `root` joined with relative path `rel`, byte for byte.
pub(crate) fn under(root: &Path, rel: &str) -> PathBuf {
    root.join(os(rel))
}

/// Relative path `rel` for people (result.json, notes): its bytes, invalid UTF-8 shown as
/// the replacement character.
pub(crate) fn shown(rel: &str) -> String {
    String::from_utf8_lossy(&bytes(rel)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_comes_back_byte_for_byte() {
        let names: [&[u8]; 7] = [
            b"plain.txt",
            b"dir/caf\xe9.txt",
            b"\xff\xfe/\x80",
            "x\u{10FFFD}y".as_bytes(),
            "\u{10FE41}".as_bytes(),
            b"mixed \xc3\xa9 and \xe9",
            b"",
        ];
        for name in names {
            let rel = from_bytes(name);
            assert_eq!(&*bytes(&rel), name, "{rel:?}");
            assert_eq!(os(&rel).as_os_str().as_bytes(), name);
            assert_eq!(
                rel.matches('/').count(),
                name.iter().filter(|b| **b == b'/').count()
            );
        }
        assert!(matches!(
            from_bytes(b"src/main.rs"),
            Cow::Borrowed("src/main.rs")
        ));
        assert_eq!(shown(&from_bytes(b"caf\xe9")), "caf\u{FFFD}");
    }
}
