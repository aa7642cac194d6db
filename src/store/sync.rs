//! The copier of a run folder into its store: while the run goes, every [`LIVE_EVERY`]
//! the files that grow (events.jsonl, session.jsonl), the run's diff so far and the
//! records a resume needs (origin.json, trusted.json); when the run has written its last
//! file, everything in its folder. Each body is masked by the run's redactor first, and
//! one that still holds a secret is not sent. A store that cannot be reached is a
//! warning and a retry on the next tick (the local folder is complete either way); the
//! final copy keeps trying until its deadline.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::RunStore;
use crate::redact::Redactor;

/// How often the growing files are copied while the run goes.
pub(super) const LIVE_EVERY: Duration = Duration::from_secs(1);

/// How long the final copy may take in all (a large folder on a slow link).
pub(super) const FINAL_DEADLINE: Duration = Duration::from_secs(60);

/// How often the final copy tries a store that fails (with a pause of 1 s, then 2 s).
const FINAL_TRIES: u64 = 3;

/// Files copied while the run goes (the rest only at its end).
const LIVE: [&str; 4] = [
    "events.jsonl",
    "session.jsonl",
    "origin.json",
    "trusted.json",
];

/// The run's diff in the folder and the store.
const DIFF: &str = "diff.patch";

/// The run's diff so far, computed on a blocking thread.
pub type DiffSource = Arc<dyn Fn() -> Option<Vec<u8>> + Send + Sync>;

/// How the copies went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreStatus {
    /// Whether the latest copy of every file succeeded.
    pub ok: bool,
    pub puts: u32,
    pub failures: u32,
    pub last_error: Option<String>,
}

/// Copies one run folder into a store.
pub struct StoreSync {
    store: RunStore,
    run: String,
    dir: PathBuf,
    redactor: Redactor,
    diff: Option<DiffSource>,
    /// The digest of each body last written, so an unchanged file is not sent again.
    sent: Mutex<HashMap<String, [u8; 32]>>,
    status: Mutex<StoreStatus>,
}

impl StoreSync {
    pub fn new(
        store: RunStore,
        run: &str,
        dir: &Path,
        redactor: Redactor,
        diff: Option<DiffSource>,
    ) -> StoreSync {
        StoreSync {
            store,
            run: run.to_owned(),
            dir: dir.to_path_buf(),
            redactor,
            diff,
            sent: Mutex::new(HashMap::new()),
            status: Mutex::new(StoreStatus {
                ok: true,
                ..StoreStatus::default()
            }),
        }
    }

    /// Where the run goes in the store, for messages.
    pub fn target(&self) -> String {
        format!("{}/{}", self.store.url(), self.run)
    }

    /// The status so far.
    pub fn status(&self) -> StoreStatus {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Copy the growing files every [`LIVE_EVERY`] in a background task; `on_change` hears
    /// of a failure and of the recovery after one.
    pub fn spawn(self, on_change: impl Fn(&StoreStatus) + Send + Sync + 'static) -> StoreHandle {
        let sync = Arc::new(self);
        let task = tokio::spawn(live(Arc::clone(&sync), on_change));
        StoreHandle { sync, task }
    }

    /// One live copy: the growing files and the diff so far.
    async fn copy_live(&self) -> StoreStatus {
        let mut results = Vec::new();
        let events_changed = self.is_new_on_disk("events.jsonl");
        for name in LIVE {
            if let Some(r) = self.copy_file(name).await {
                results.push(r);
            }
        }
        if events_changed && let Some(diff) = self.diff.clone() {
            let patch = tokio::task::spawn_blocking(move || diff())
                .await
                .ok()
                .flatten();
            if let Some(patch) = patch {
                results.push(self.copy_bytes(DIFF, &patch).await);
            }
        }
        self.record(results)
    }

    /// Everything in the run folder (top-level files and `artifacts/`), until `deadline`.
    pub async fn copy_all(&self, deadline: Instant) -> StoreStatus {
        let mut tries = 0;
        loop {
            tries += 1;
            let mut results = Vec::new();
            for name in folder_files(&self.dir) {
                if let Some(r) = self.copy_file(&name).await {
                    results.push(r);
                }
            }
            let failed = results.iter().any(Result::is_err);
            let status = self.record(results);
            let pause = Duration::from_secs(tries);
            if !failed || tries >= FINAL_TRIES || Instant::now() + pause > deadline {
                return status;
            }
            tokio::time::sleep(pause).await;
        }
    }

    /// Whether `name`'s bytes differ from what was last sent (read, not masked).
    fn is_new_on_disk(&self, name: &str) -> bool {
        let Ok(raw) = std::fs::read(self.dir.join(name)) else {
            return false;
        };
        let sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        sent.get(name) != Some(&digest(&raw))
    }

    /// Copy one file of the folder if it changed since it was last sent; `None` when it
    /// is absent or unchanged.
    async fn copy_file(&self, name: &str) -> Option<Result<(), String>> {
        let raw = std::fs::read(self.dir.join(name)).ok()?;
        {
            let sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
            if sent.get(name) == Some(&digest(&raw)) {
                return None;
            }
        }
        Some(self.copy_bytes(name, &raw).await)
    }

    async fn copy_bytes(&self, name: &str, raw: &[u8]) -> Result<(), String> {
        let key = digest(raw);
        let Some(body) = self.masked(raw) else {
            return Err(format!(
                "{name}: not copied, it holds a secret after masking"
            ));
        };
        if name == DIFF && body != raw {
            return self.withhold_diff(key).await;
        }
        self.store
            .put(&self.run, name, body)
            .await
            .map_err(|e| self.redactor.redact(&format!("{name}: {e}")).into_owned())?;
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), key);
        Ok(())
    }

    /// A diff that held a secret is not kept in the store, masked: a resume elsewhere would
    /// apply it and get the masks. An earlier copy goes too, so such a resume refuses (the
    /// run changed files, its folder has no diff) rather than resume on an old state.
    async fn withhold_diff(&self, key: [u8; 32]) -> Result<(), String> {
        self.store
            .delete(&self.run, DIFF)
            .await
            .map_err(|e| self.redactor.redact(&format!("{DIFF}: {e}")).into_owned())?;
        tracing::warn!(
            "{DIFF} holds a secret the run wrote into a file: not copied to the store (it is exact in the local folder); a resume from the store will refuse"
        );
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(DIFF.to_owned(), key);
        Ok(())
    }

    /// `raw` with secrets masked (text), or as it is (binary without a secret); `None`
    /// when a secret survives.
    fn masked(&self, raw: &[u8]) -> Option<Vec<u8>> {
        match std::str::from_utf8(raw) {
            Ok(text) => {
                let masked = self.redactor.redact(text);
                (!self.redactor.finds_secret(&masked)).then(|| masked.into_owned().into_bytes())
            }
            Err(_) => {
                (!self.redactor.finds_secret(&String::from_utf8_lossy(raw))).then(|| raw.to_vec())
            }
        }
    }

    fn record(&self, results: Vec<Result<(), String>>) -> StoreStatus {
        let mut s = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        s.ok = results.iter().all(Result::is_ok);
        for r in results {
            match r {
                Ok(()) => s.puts += 1,
                Err(e) => {
                    s.failures += 1;
                    s.last_error = Some(e);
                }
            }
        }
        s.clone()
    }
}

fn digest(raw: &[u8]) -> [u8; 32] {
    Sha256::digest(raw).into()
}

/// The files of a run folder to copy, relative and `/`-separated: its top-level files
/// and what is under `artifacts/`; never a copied `workspace/`, a lock or a hidden file.
fn folder_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        // git-start.json holds this machine's .git config: of no use elsewhere.
        if name.starts_with('.') || name.ends_with(".lock") || name == crate::git_guard::RECORD {
            continue;
        }
        if kind.is_file() {
            out.push(name);
        } else if kind.is_dir() && name == "artifacts" {
            walk(&entry.path(), &name, &mut out);
        }
    }
    out.sort();
    out
}

fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = format!("{rel}/{}", entry.file_name().to_string_lossy());
        match entry.file_type() {
            Ok(k) if k.is_file() => out.push(name),
            Ok(k) if k.is_dir() => walk(&entry.path(), &name, out),
            _ => {}
        }
    }
}

async fn live(sync: Arc<StoreSync>, on_change: impl Fn(&StoreStatus)) {
    let mut ticks = tokio::time::interval(LIVE_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut was_ok = true;
    loop {
        ticks.tick().await;
        let status = sync.copy_live().await;
        if status.ok != was_ok {
            on_change(&status);
        }
        was_ok = status.ok;
    }
}

/// The live copies of a run; [`StoreHandle::finish`] ends them with the final copy.
pub struct StoreHandle {
    sync: Arc<StoreSync>,
    task: JoinHandle<()>,
}

impl StoreHandle {
    /// Stop the live copies and copy the whole folder (within [`FINAL_DEADLINE`]).
    pub async fn finish(self) -> StoreStatus {
        self.task.abort();
        let deadline = Instant::now() + FINAL_DEADLINE;
        let copy = self.sync.copy_all(deadline);
        match tokio::time::timeout_at(deadline, copy).await {
            Ok(status) => status,
            Err(_) => self.sync.record(vec![Err(format!(
                "the final copy did not finish within {} s",
                FINAL_DEADLINE.as_secs()
            ))]),
        }
    }

    /// Where the run goes in the store.
    pub fn target(&self) -> String {
        self.sync.target()
    }
}

impl Drop for StoreHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_copy_leaves_out_the_workspace_locks_and_hidden_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["result.json", "events.jsonl", ".run.lock", "x.lock"] {
            std::fs::write(d.join(f), "{}").unwrap();
        }
        std::fs::create_dir_all(d.join("workspace/src")).unwrap();
        std::fs::write(d.join("workspace/src/a.rs"), "").unwrap();
        std::fs::create_dir_all(d.join("artifacts/out")).unwrap();
        std::fs::write(d.join("artifacts/out/r.txt"), "").unwrap();
        assert_eq!(
            folder_files(d),
            ["artifacts/out/r.txt", "events.jsonl", "result.json"]
        );
    }
}
