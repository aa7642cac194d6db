//! Session upload: PUT the run's session log (and its diff) to URLs the job or
//! `--upload-url` gives, right away, then on an interval (default 30 s), and once more
//! when the run ends, so someone can follow or audit a CI run from outside the runner.
//!
//! - URLs: `upload.url` / `url_env` (or `--upload-url`) receives session.jsonl, the whole
//!   log so far (one JSON object per line, see `session::Item`), as `application/x-ndjson`:
//!   each upload is a longer prefix of the same log, the last one all of it; the optional `upload.diff_url` / `diff_url_env` receives the diff
//!   as `text/plain`. Two URLs, because a presigned URL names one object. `{run_id}` in a
//!   URL is replaced, for a plain server or bucket that takes any PUT.
//! - Redaction: session.jsonl is already masked on disk; it is masked again here. diff.patch
//!   stays exact on disk (so it applies), but an upload is an output that leaves the
//!   machine, so the uploaded diff is masked too (and a diff that is not UTF-8 is sent with
//!   the bad bytes replaced). A body that still contains a secret after masking is never
//!   sent; that counts as a failed upload.
//! - Failures: retried with backoff (see [`UploadPolicy`]), then reported in
//!   [`UploadStatus`] and by the caller as a warning and an event; they never fail a run.
//!   The final upload is capped in time so a dead server cannot hold the run.
//! - A presigned URL's query string is a credential: it never appears in a log line, an
//!   error or a status (see [`display_url`]).

mod client;
mod target;
mod task;

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use tokio::time::Instant;

pub use client::UploadPolicy;
pub use target::{UploadTarget, display_url};
pub use task::UploaderHandle;

use crate::events::{Event, now};
use crate::redact::Redactor;

/// How often to upload when the job does not say.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);

/// Why uploads cannot start. The caller warns and runs without them.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("{what} {reason}; uploads are off")]
    InvalidUrl { what: &'static str, reason: String },
    #[error("{what}: the environment variable {name} is unset or empty; uploads are off")]
    MissingEnv { what: &'static str, name: String },
    #[error("cannot build the HTTP client for uploads: {0}")]
    Client(String),
}

/// What one upload sends: session.jsonl's bytes and, if known, diff.patch's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UploadBody {
    pub session: Vec<u8>,
    /// `None`: no diff is known (no git), and the diff URL gets nothing this time.
    pub diff: Option<Vec<u8>>,
}

/// How the uploads of a run went, for result.json.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct UploadStatus {
    /// Whether every PUT of the latest upload (the final one, at the end) succeeded.
    pub ok: bool,
    /// PUTs that succeeded (session and diff count separately).
    pub uploads: u32,
    /// PUTs that failed after their retries (or were refused because of a secret).
    pub failures: u32,
    /// The HTTP status of the latest response.
    pub last_status: Option<u16>,
    /// The latest error, kept after later successes (no URL query string in it).
    pub last_error: Option<String>,
    /// When the latest upload ended (RFC 3339).
    pub last_at: Option<String>,
}

impl UploadStatus {
    /// The `upload.finished` event for this status of the session upload.
    pub fn event(&self) -> Event {
        self.event_for(crate::events::UploadTarget::Session)
    }

    /// The `upload.finished` event for this status; `target` is `session` or `artifacts`.
    pub fn event_for(&self, target: crate::events::UploadTarget) -> Event {
        let message = if self.ok {
            format!(
                "uploaded ({} PUTs succeeded, {} failed so far)",
                self.uploads, self.failures
            )
        } else {
            self.last_error
                .clone()
                .unwrap_or_else(|| "upload failed".to_owned())
        };
        Event::UploadFinished {
            target,
            ok: self.ok,
            status: self.last_status,
            message,
            uploads: self.uploads,
            failures: self.failures,
            last_error: self.last_error.clone(),
            last_at: self.last_at.clone(),
        }
    }
}

/// Uploads to one target with one HTTP client, keeping the run's [`UploadStatus`].
pub struct Uploader {
    client: reqwest::Client,
    target: UploadTarget,
    redactor: Redactor,
    policy: UploadPolicy,
    status: Mutex<UploadStatus>,
}

impl Uploader {
    pub fn new(
        target: UploadTarget,
        redactor: Redactor,
        policy: UploadPolicy,
    ) -> Result<Uploader, UploadError> {
        Ok(Uploader {
            client: client::build_client(&policy)?,
            target,
            redactor,
            policy,
            status: Mutex::new(UploadStatus::default()),
        })
    }

    /// The status so far.
    pub fn status(&self) -> UploadStatus {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// One upload: the session, then the diff (if there is a diff URL and a diff). Retries
    /// stop at `deadline`. Returns the status afterwards.
    pub async fn upload(&self, body: &UploadBody, deadline: Option<Instant>) -> UploadStatus {
        let mut outcomes = vec![
            self.put(
                &self.target.session,
                "application/x-ndjson",
                &body.session,
                deadline,
            )
            .await,
        ];
        if let (Some(url), Some(diff)) = (&self.target.diff, &body.diff) {
            outcomes.push(self.put(url, "text/plain", diff, deadline).await);
        }
        self.record(&outcomes)
    }

    async fn put(
        &self,
        url: &reqwest::Url,
        content_type: &'static str,
        raw: &[u8],
        deadline: Option<Instant>,
    ) -> client::PutOutcome {
        let Some(body) = self.mask(raw) else {
            return client::PutOutcome::failed(
                None,
                format!(
                    "PUT {}: not sent, the body still contains a secret after masking",
                    display_url(url)
                ),
            );
        };
        let outcome = client::put(
            &self.client,
            url,
            content_type,
            &body,
            &self.policy,
            deadline,
        )
        .await;
        if let Some(e) = &outcome.error {
            tracing::warn!("upload failed: {}", self.redactor.redact(e))
        } else {
            tracing::debug!("uploaded {} bytes to {}", body.len(), display_url(url))
        }
        outcome
    }

    /// `raw` with secrets masked, or `None` if a secret survives masking.
    /// PUT each artifact (`(workspace-relative path, file)`) to `template` with `{path}`
    /// replaced. Text files are masked like the session; a binary file that contains a
    /// secret is not sent.
    pub async fn upload_artifacts(
        &self,
        template: &str,
        artifacts: &[(String, std::path::PathBuf)],
        deadline: Option<Instant>,
    ) -> UploadStatus {
        let mut outcomes = Vec::new();
        for (rel, file) in artifacts {
            let encoded: String = rel
                .split('/')
                .map(url_segment)
                .collect::<Vec<_>>()
                .join("/");
            let Ok(url) = reqwest::Url::parse(&template.replace("{path}", &encoded)) else {
                outcomes.push(client::PutOutcome::failed(
                    None,
                    format!("artifact {rel}: the artifacts URL is not a URL"),
                ));
                continue;
            };
            let Ok(raw) = std::fs::read(file) else {
                outcomes.push(client::PutOutcome::failed(
                    None,
                    format!("artifact {rel}: cannot read {}", file.display()),
                ));
                continue;
            };
            let body = match std::str::from_utf8(&raw) {
                Ok(_) => self.mask(&raw),
                Err(_) => {
                    (!self.redactor.finds_secret(&String::from_utf8_lossy(&raw))).then_some(raw)
                }
            };
            let Some(body) = body else {
                outcomes.push(client::PutOutcome::failed(
                    None,
                    format!("artifact {rel}: not sent, it contains a secret"),
                ));
                continue;
            };
            outcomes.push(
                client::put(
                    &self.client,
                    &url,
                    "application/octet-stream",
                    &body,
                    &self.policy,
                    deadline,
                )
                .await,
            );
        }
        self.record(&outcomes)
    }

    fn mask(&self, raw: &[u8]) -> Option<Vec<u8>> {
        let text = String::from_utf8_lossy(raw);
        let masked = self.redactor.redact(&text);
        if self.redactor.finds_secret(&masked) {
            return None;
        }
        Some(masked.into_owned().into_bytes())
    }

    fn record(&self, outcomes: &[client::PutOutcome]) -> UploadStatus {
        let mut s = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        s.ok = outcomes.iter().all(|o| o.ok);
        for o in outcomes {
            if o.ok {
                s.uploads += 1;
            } else {
                s.failures += 1;
            }
            if o.status.is_some() {
                s.last_status = o.status;
            }
            if let Some(e) = &o.error {
                s.last_error = Some(self.redactor.redact(e).into_owned());
            }
        }
        s.last_at = Some(now());
        s.clone()
    }
}

/// A path segment percent-encoded for a URL (unreserved characters kept).
fn url_segment(seg: &str) -> String {
    seg.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}
