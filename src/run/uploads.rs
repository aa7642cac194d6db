//! Session upload wired into a run: the (redacted) session log and the run's diff are
//! PUT to the job's URL right away, on an interval, and once at the end. A failing upload
//! is a warning and an event, never a failed run. A signal (a CI cancel) ends the final
//! uploads: the artifacts' at once, the session's after a last [`LAST_TRY`], so the run
//! still writes result.json well inside the runner's grace period.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::checkpoints::Checkpoints;
use crate::events::{Emitter, Event};
use crate::job::Job;
use crate::redact::Redactor;
use crate::upload::{
    DEFAULT_INTERVAL, UploadBody, UploadPolicy, UploadStatus, UploadTarget, Uploader,
    UploaderHandle,
};

/// Start uploading, if the job or the command line gives a URL.
pub(crate) fn start(
    job: &Job,
    cli_url: Option<&str>,
    run_id: &str,
    session_path: PathBuf,
    checkpoints: Option<Arc<Checkpoints>>,
    redactor: &Redactor,
    emitter: &Arc<Emitter>,
) -> Option<UploaderHandle> {
    let target = UploadTarget::from_job(job.upload.as_ref(), cli_url, run_id, |n| {
        std::env::var(n).ok()
    });
    let uploader = match target.and_then(|t| {
        t.map(|t| Uploader::new(t, redactor.clone(), UploadPolicy::default()))
            .transpose()
    }) {
        Ok(Some(u)) => u,
        Ok(None) => return None,
        Err(e) => {
            emitter.emit(Event::Warning {
                message: format!("session upload is off: {e}"),
            });
            return None;
        }
    };
    let interval = job.upload.as_ref().map_or(DEFAULT_INTERVAL, |u| u.interval);
    let em = emitter.clone();
    let last_ok = Arc::new(AtomicBool::new(true));
    let snapshot = move || {
        Some(UploadBody {
            session: std::fs::read(&session_path).ok()?,
            diff: checkpoints.as_ref().and_then(|c| c.current_diff()),
        })
    };
    // Report a failure, and the recovery after one, not every successful tick.
    let on_result = move |s: UploadStatus| {
        if last_ok.swap(s.ok, Ordering::SeqCst) != s.ok || !s.ok {
            em.emit(s.event());
        }
    };
    Some(uploader.spawn(interval, snapshot, on_result))
}

/// The artifacts URL template of the job (`{run_id}` filled in), if any.
pub(crate) fn artifacts_template(job: &Job, run_id: &str) -> Option<String> {
    let u = job.upload.as_ref()?;
    let raw = u.artifacts_url.clone().or_else(|| {
        u.artifacts_url_env
            .as_ref()
            .and_then(|n| std::env::var(n).ok())
    })?;
    Some(raw.replace("{run_id}", run_id))
}

/// How long the final session upload may still take once a signal came (GitHub gives a
/// cancelled step 7.5 s after SIGINT, and 2.5 s more after SIGTERM).
pub(crate) const LAST_TRY: Duration = Duration::from_secs(2);

/// What an upload cut by a signal reports.
fn interrupted(so_far: &UploadStatus, what: &str) -> UploadStatus {
    UploadStatus {
        ok: false,
        failures: so_far.failures + 1,
        last_error: Some(format!(
            "interrupted by a signal before the {what} finished"
        )),
        last_at: Some(crate::events::now()),
        ..*so_far
    }
}

/// PUT the run's artifacts (bounded in time, and ended by a signal); failures are warnings.
pub(crate) async fn upload_artifacts(
    job: &Job,
    run_id: &str,
    artifacts: &[crate::tools::ArtifactRecord],
    redactor: &Redactor,
    emitter: &Emitter,
    interrupt: &CancellationToken,
) -> Option<UploadStatus> {
    let template = artifacts_template(job, run_id)?;
    if artifacts.is_empty() {
        return None;
    }
    // The target only carries the client; every artifact goes to the template.
    let target = UploadTarget::new(&template.replace("{path}", "_"), None, run_id).ok()?;
    let uploader = Uploader::new(target, redactor.clone(), UploadPolicy::default()).ok()?;
    let list: Vec<(String, PathBuf)> = artifacts
        .iter()
        .map(|a| (a.path.clone(), a.stored.clone()))
        .collect();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let upload = uploader.upload_artifacts(&template, &list, Some(deadline));
    let status = tokio::select! {
        biased;
        () = interrupt.cancelled() => interrupted(&uploader.status(), "artifact upload"),
        status = upload => status,
    };
    emitter.emit(status.event_for(crate::events::UploadTarget::Artifacts));
    if !status.ok {
        let why = status.last_error.clone().unwrap_or_default();
        emitter.emit(Event::Warning {
            message: format!("artifact upload failed: {why}"),
        });
    }
    Some(status)
}

/// The final upload (bounded in time, and cut [`LAST_TRY`] after a signal); its status
/// goes to result.json.
pub(crate) async fn finish(
    handle: UploaderHandle,
    session: PathBuf,
    diff: Option<PathBuf>,
    emitter: &Emitter,
    interrupt: &CancellationToken,
) -> UploadStatus {
    let body = UploadBody {
        session: std::fs::read(&session).unwrap_or_default(),
        diff: diff.and_then(|p| std::fs::read(p).ok()),
    };
    let so_far = handle.status();
    let last_try = async {
        interrupt.cancelled().await;
        tokio::time::sleep(LAST_TRY).await;
    };
    let status = tokio::select! {
        status = handle.finish(Some(body)) => status,
        () = last_try => interrupted(&so_far, "final session upload"),
    };
    emitter.emit(status.event());
    if !status.ok {
        let why = status.last_error.clone().unwrap_or_default();
        emitter.emit(Event::Warning {
            message: format!("session upload failed: {why}"),
        });
    }
    status
}
