//! Every run folder a test leaves behind is checked here: its events.jsonl, read back and
//! folded, must give the very bytes of the result.json, junit.xml and report.html the run
//! wrote (`cn_run::report::rebuild` and `cn_run::report::html::rebuild`, the code
//! `cn-run report` uses). `runner::run` and `runner::run_folder` call it, so every
//! end-to-end test replays its runs.
//!
//! No field is exempt: the events carry everything the outputs say.

use std::path::{Path, PathBuf};

/// The run folders in `dir`: itself, and (for `--parallel`) its sub-folders.
fn run_folders(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(dir) {
        found.extend(entries.filter_map(Result::ok).map(|e| e.path()));
    }
    found
        .into_iter()
        .filter(|d| d.join("events.jsonl").is_file() && d.join("result.json").is_file())
        .collect()
}

/// Replays every run folder in `dir` and compares; returns how many were compared.
pub fn assert_replays(dir: &Path) -> usize {
    let folders = run_folders(dir);
    for folder in &folders {
        assert_replays_one(folder);
        log_replayed(folder);
    }
    folders.len()
}

/// The outputs rebuilt from `folder`'s events equal the files the run wrote.
pub fn assert_replays_one(folder: &Path) {
    let none = cn_run::redact::Redactor::none();
    let rebuilt = cn_run::report::rebuild::rebuild(folder, &none)
        .unwrap_or_else(|e| panic!("replaying {}: {e}", folder.display()));
    let written = std::fs::read_to_string(folder.join("result.json")).unwrap();
    pretty_assertions::assert_eq!(
        written,
        rebuilt.result_json,
        "result.json of {} is not the fold of its events.jsonl",
        folder.display()
    );
    assert_session_replays(folder);
    assert_report_replays(folder);
    if let Ok(written) = std::fs::read_to_string(folder.join("junit.xml")) {
        pretty_assertions::assert_eq!(
            written,
            rebuilt.junit_xml,
            "junit.xml of {} is not the fold of its events.jsonl",
            folder.display()
        );
    }
}

/// report.html is the fold of events.jsonl (and diff.patch).
fn assert_report_replays(folder: &Path) {
    let Ok(written) = std::fs::read_to_string(folder.join("report.html")) else {
        return;
    };
    let rebuilt = cn_run::report::html::rebuild(folder, &cn_run::redact::Redactor::none())
        .unwrap_or_else(|e| panic!("replaying {}: {e}", folder.display()));
    if written != rebuilt {
        let at = written
            .bytes()
            .zip(rebuilt.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(written.len().min(rebuilt.len()));
        let around = |s: &str| {
            s.get(at.saturating_sub(200)..(at + 200).min(s.len()))
                .unwrap_or_default()
                .to_owned()
        };
        panic!(
            "report.html of {} is not the fold of its events.jsonl; at byte {at}:\n{}\n---\n{}",
            folder.display(),
            around(&written),
            around(&rebuilt)
        );
    }
}

/// session.jsonl is the fold of events.jsonl: the lines after its header (the meta line)
/// are the lines the events fold into, in order (`cn_run::session::replay`). A folder
/// whose session began as an older session.json is left out (its snapshot is header too).
/// Where a process was killed, its part of the session may lack the lines of the one event
/// written last (events.jsonl is written first): see [`assert_killed_parts_replay`].
fn assert_session_replays(folder: &Path) {
    use cn_run::session::Item;
    let Ok(text) = std::fs::read_to_string(folder.join("session.jsonl")) else {
        return;
    };
    if folder.join("session.json").exists() {
        return;
    }
    let events = cn_run::report::rebuild::read_events(&folder.join("events.jsonl"))
        .unwrap_or_else(|e| panic!("reading the events of {}: {e}", folder.display()));
    let whole = |l: &&str| l.ends_with('}');
    let logged: Vec<Item> = text
        .lines()
        .filter(whole)
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .filter(|i| !matches!(i, Item::Meta { .. }))
        .collect();
    let replayed = cn_run::session::replay(&events);
    let json = |items: &[Item]| -> Vec<String> {
        items
            .iter()
            .map(|i| serde_json::to_string(i).unwrap())
            .collect()
    };
    if !every_run_completed(&events) {
        return assert_killed_parts_replay(folder, &json(&logged), &json(&replayed));
    }
    pretty_assertions::assert_eq!(
        json(&logged),
        json(&replayed),
        "session.jsonl of {} is not the fold of its events.jsonl",
        folder.display()
    );
}

/// The session of a run killed (and perhaps resumed): cut at each `resumed` line, every
/// part is the replayed part, or for a process that was killed, the replayed part less at
/// most the two lines one event makes, at its end.
fn assert_killed_parts_replay(folder: &Path, logged: &[String], replayed: &[String]) {
    let parts = |lines: &[String]| -> Vec<Vec<String>> {
        let mut parts = vec![Vec::new()];
        for l in lines {
            if l.starts_with("{\"type\":\"resumed\"") {
                parts.push(Vec::new());
            }
            parts.last_mut().unwrap().push(l.clone());
        }
        parts
    };
    let (logged, replayed) = (parts(logged), parts(replayed));
    let what = format!("session.jsonl of {} (a killed run)", folder.display());
    // A kill right after a resumed run's `run.started` leaves its `resumed` line out.
    assert!(
        replayed.len() == logged.len() || replayed.len() == logged.len() + 1,
        "{what}: {} parts, the events {}",
        logged.len(),
        replayed.len()
    );
    for (l, r) in logged.iter().zip(&replayed) {
        let prefix = r.len() >= l.len() && r.len() - l.len() <= 2 && r[..l.len()] == l[..];
        if !prefix {
            pretty_assertions::assert_eq!(l, r, "{what}: a part is not its replay");
        }
    }
}

/// Whether each `run.started` of the file is followed by its `run.completed`.
fn every_run_completed(events: &[cn_run::events::Envelope]) -> bool {
    use cn_run::events::Event;
    let mut open = false;
    for e in events.iter().filter(|e| e.parent_call_id.is_none()) {
        match e.event {
            Event::RunStarted { .. } if open => return false,
            Event::RunStarted { .. } => open = true,
            Event::RunCompleted { .. } => open = false,
            _ => {}
        }
    }
    !open
}

/// With `CN_RUN_REPLAY_LOG=FILE`, each replayed folder is appended to FILE (to count what
/// the suite replays).
fn log_replayed(folder: &Path) {
    use std::io::Write as _;
    let Some(log) = std::env::var_os("CN_RUN_REPLAY_LOG") else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(f, "{}", folder.display());
    }
}
