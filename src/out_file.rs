//! The one writer of the files cn-run writes whole — every file of a run folder but its
//! two logs (result.json, junit.xml, diff.patch, report.html, origin.json, the trust and
//! `.git` records, collected artifacts, a file output's file) and the call's own reports.
//!
//! A [`WholeFile`] is written to a temporary file beside its place, synced to disk, and
//! renamed over the old one, and the folder is synced too: a reader finds the old file or
//! the new one, never half a file and never no file, whether the process is killed or the
//! machine loses power. The logs (events.jsonl, session.jsonl) are only appended to
//! (`append_log`): created the same way, synced when the run writes its last files.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A file being written whole: nothing is at `path` until [`WholeFile::commit`]; dropped
/// without it, the temporary file goes and the old file stays.
pub(crate) struct WholeFile {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl WholeFile {
    /// A new file for `path` (its folder must exist).
    pub(crate) fn create(path: &Path) -> io::Result<WholeFile> {
        let tmp = tempfile::NamedTempFile::new_in(folder(path)).map_err(plain)?;
        Ok(WholeFile {
            tmp,
            path: path.to_path_buf(),
        })
    }

    /// The file to write the content to.
    pub(crate) fn file_mut(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// Synced, put in place, the folder synced: the open file, now at `path`.
    pub(crate) fn commit(self) -> io::Result<File> {
        self.tmp.as_file().sync_all().map_err(plain)?;
        let file = self.tmp.persist(&self.path).map_err(|e| plain(e.error))?;
        sync_folder(folder(&self.path))?;
        Ok(file)
    }
}

fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Syncs a folder's entries (a file renamed into it stays there after a power cut).
fn sync_folder(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Writes `parts`, one after the other, as the whole new content of `path`. The error is
/// the system's own (a full disk, a read-only folder), without the temporary file's name.
pub(crate) fn write_whole(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    let mut file = WholeFile::create(path)?;
    for part in parts {
        file.file_mut().write_all(part).map_err(plain)?;
    }
    file.commit().map(drop)
}

/// An error as the system said it (tempfile adds the temporary file's path).
fn plain(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => e,
    }
}

/// Cuts a torn last line off a JSON-lines file opened for reading and writing (a process
/// killed while writing it), so what is appended next starts on a line of its own.
pub(crate) fn cut_torn_line(file: &mut File) -> io::Result<()> {
    let len = file.metadata()?.len();
    let keep = whole_lines_len(file, len)?;
    if keep < len {
        file.set_len(keep)?;
    }
    Ok(())
}

/// The length of `file` up to and with its last newline.
fn whole_lines_len(file: &mut File, len: u64) -> io::Result<u64> {
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_rewrite_leaves_only_the_new_content_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        write_whole(&path, &[b"{\"turns\": 1}"]).unwrap();
        write_whole(&path, &[b"{\"turns\": 2}", b"\n"]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"turns\": 2}\n");
        assert_eq!(names(dir.path()), ["result.json"]);
    }

    #[test]
    fn a_directory_in_the_way_is_an_error_and_nothing_is_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        std::fs::create_dir(&path).unwrap();
        assert!(write_whole(&path, &[b"{}"]).is_err());
        assert_eq!(names(dir.path()), ["result.json"]);
        assert!(path.is_dir());
    }
}
