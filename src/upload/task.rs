//! The background side of uploads: the interval task that uploads right away and then
//! every interval (a tick that comes while an upload is still going is skipped), and the
//! handle that stops it and makes the final, time-capped upload.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use super::client::PutOutcome;
use super::{UploadBody, UploadStatus, Uploader};

type Snapshot = Arc<dyn Fn() -> Option<UploadBody> + Send + Sync>;

impl Uploader {
    /// Upload right away and then every `interval` in a background task, skipping ticks
    /// while an upload is still going. `snapshot` runs on a blocking thread (it may read
    /// files or compute a diff); `None` skips that tick. `on_result` gets the status after
    /// each interval upload.
    pub fn spawn(
        self,
        interval: Duration,
        snapshot: impl Fn() -> Option<UploadBody> + Send + Sync + 'static,
        on_result: impl Fn(UploadStatus) + Send + Sync + 'static,
    ) -> UploaderHandle {
        let uploader = Arc::new(self);
        let snapshot: Snapshot = Arc::new(snapshot);
        let task = tokio::spawn(every(
            Arc::clone(&uploader),
            interval,
            Arc::clone(&snapshot),
            on_result,
        ));
        UploaderHandle {
            uploader,
            snapshot,
            task,
        }
    }
}

async fn every(
    uploader: Arc<Uploader>,
    interval: Duration,
    snapshot: Snapshot,
    on_result: impl Fn(UploadStatus),
) {
    let mut ticks = tokio::time::interval(interval.max(Duration::from_millis(10)));
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        ticks.tick().await;
        if let Some(body) = take(&snapshot).await {
            on_result(uploader.upload(&body, None).await);
        }
    }
}

async fn take(snapshot: &Snapshot) -> Option<UploadBody> {
    let snapshot = Arc::clone(snapshot);
    tokio::task::spawn_blocking(move || snapshot())
        .await
        .ok()
        .flatten()
}

/// The running interval uploads; [`UploaderHandle::finish`] ends them with a final upload.
/// Dropping the handle stops them without one.
pub struct UploaderHandle {
    uploader: Arc<Uploader>,
    snapshot: Snapshot,
    task: JoinHandle<()>,
}

impl UploaderHandle {
    /// The status so far.
    pub fn status(&self) -> UploadStatus {
        self.uploader.status()
    }

    /// Stop the interval uploads (one in flight is abandoned) and upload `final_body` (or,
    /// if `None`, a fresh snapshot), within the policy's `final_cap`.
    pub async fn finish(mut self, final_body: Option<UploadBody>) -> UploadStatus {
        self.task.abort();
        let _ = (&mut self.task).await;
        let cap = self.uploader.policy.final_cap;
        let deadline = Instant::now() + cap;
        let body = match final_body {
            Some(b) => Some(b),
            None => tokio::time::timeout_at(deadline, take(&self.snapshot))
                .await
                .ok()
                .flatten(),
        };
        let Some(body) = body else {
            let outcome =
                PutOutcome::failed(None, "final upload: no session snapshot to send".to_owned());
            return self.uploader.record(&[outcome]);
        };
        let upload = self.uploader.upload(&body, Some(deadline));
        if let Ok(status) = tokio::time::timeout_at(deadline, upload).await {
            status
        } else {
            let outcome = PutOutcome::failed(
                None,
                format!(
                    "final upload to {} did not finish within {} s",
                    self.uploader.target.session_display(),
                    cap.as_secs_f64()
                ),
            );
            self.uploader.record(&[outcome])
        }
    }
}

impl Drop for UploaderHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}
