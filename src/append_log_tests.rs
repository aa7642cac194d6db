//! The log on a real full file system: a small tmpfs (root only; skipped, and said, as
//! another user), filled and freed around the appends.

use super::*;

/// A tmpfs of `kib` KiB mounted on a temp folder, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(kib: u32) -> Option<Tmpfs> {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the file system but for `room` bytes; the filler file is returned.
    fn fill(&self, room: u64) -> PathBuf {
        let filler = self.path().join("filler");
        let mut f = File::create(&filler).unwrap();
        let chunk = vec![b'f'; 4096];
        while io::Write::write_all(&mut f, &chunk).is_ok() {}
        drop(f);
        let len = std::fs::metadata(&filler).unwrap().len();
        let f = OpenOptions::new().write(true).open(&filler).unwrap();
        f.set_len(len.saturating_sub(room)).unwrap();
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

fn line(i: usize, size: usize) -> Vec<u8> {
    let mut l = format!("{{\"n\":{i},\"pad\":\"{}\"}}", "x".repeat(size)).into_bytes();
    l.push(b'\n');
    l
}

fn assert_whole_lines(path: &Path, upto: usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let numbers: Vec<usize> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["n"]
                .as_u64()
                .unwrap() as usize
        })
        .collect();
    assert_eq!(numbers, (0..upto).collect::<Vec<_>>(), "{}", path.display());
    assert!(text.is_empty() || text.ends_with('\n'));
}

#[test]
fn a_disk_that_fills_and_frees_loses_no_line_and_tears_none() {
    let Some(fs) = Tmpfs::mount(256) else { return };
    let path = fs.path().join("events.jsonl");
    let mut log = AppendLog::create(&path).unwrap();
    assert!(log.append(&line(0, 100)));
    // Room for part of the next line only: the write fails part-way.
    let filler = fs.fill(3000);
    let mut written = 1;
    for i in 1..20 {
        if log.append(&line(i, 1000)) {
            written = i + 1;
        }
    }
    assert!(written < 20, "the disk never filled");
    let health = log.health();
    assert!(health.incomplete(), "{health:?}");
    assert!(
        health.error.as_deref().unwrap().contains("No space left"),
        "{health:?}"
    );
    // Whatever was written is whole lines, in order: nothing torn in the middle.
    assert_whole_lines(&path, written);
    std::fs::remove_file(filler).unwrap();
    assert!(log.append(&line(20, 10)));
    assert_whole_lines(&path, 21);
    let health = log.health();
    assert!(!health.incomplete() && health.recovered, "{health:?}");
    assert_eq!(health.problem(), None);
}

#[test]
fn a_disk_that_stays_full_says_how_many_lines_are_missing() {
    let Some(fs) = Tmpfs::mount(128) else { return };
    let path = fs.path().join("session.jsonl");
    let mut log = AppendLog::create_with(&path, &line(0, 10)).unwrap();
    fs.fill(100);
    // Each line needs pages the file system no longer has.
    for i in 1..4 {
        assert!(!log.append(&line(i, 9000)));
    }
    assert!(!log.flush());
    let problem = log.health().problem().unwrap();
    assert!(
        problem.starts_with("session.jsonl: No space left on device")
            && problem.contains("3 lines not written"),
        "{problem}"
    );
    assert_whole_lines(&path, 1);
}

#[test]
fn a_continued_log_starts_after_its_last_whole_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut text = line(0, 5);
    text.extend_from_slice(b"{\"n\":1,\"pa");
    std::fs::write(&path, &text).unwrap();
    let mut log = AppendLog::continue_at(&path).unwrap();
    assert!(log.append(&line(1, 5)));
    assert_whole_lines(&path, 2);
}
