//! Progress and log notifications from servers, recorded as `mcp.notification` events.
//!
//! A chatty server cannot flood events.jsonl: each server gets at most
//! [`MAX_PER_SERVER`] such events in a run (then one `suppressed` event says the rest were
//! dropped), progress of one call at most one event per [`PROGRESS_EVERY`] (its last step,
//! `progress == total`, always), and a message at most [`MAX_MESSAGE_CHARS`] characters.
//! Nothing is recorded before the run's event log exists (during the servers' start).
// Logging notifications are deprecated by a protocol proposal (SEP-2577) but servers send
// them today, so their SDK types stay in use here.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientConfig, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RoleClient};

use crate::events::{Emitter, Event, NoticeKind};

/// Events one server may add to a run.
pub(crate) const MAX_PER_SERVER: usize = 200;
/// The shortest gap between two progress events of one call.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_millis(500);
/// Characters kept of one message.
pub(crate) const MAX_MESSAGE_CHARS: usize = 1000;

/// Where notifications go, shared by the hub, its servers' listeners and its tools.
#[derive(Default)]
pub(crate) struct Notices {
    emitter: OnceLock<Arc<Emitter>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    per_server: HashMap<String, usize>,
    /// Progress token → (call id, when its last progress event was recorded).
    calls: HashMap<String, (String, Option<Instant>)>,
}

impl Notices {
    pub(crate) fn record_to(&self, emitter: Arc<Emitter>) {
        let _ = self.emitter.set(emitter);
    }

    /// Progress of `token` belongs to tool call `call_id` until [`Notices::untrack`].
    pub(crate) fn track(&self, token: &ProgressToken, call_id: &str) {
        self.lock()
            .calls
            .insert(key(token), (call_id.to_owned(), None));
    }

    pub(crate) fn untrack(&self, token: &ProgressToken) {
        self.lock().calls.remove(&key(token));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn progress(&self, server: &str, p: ProgressNotificationParam) {
        let last_step = p.total.is_some_and(|t| p.progress >= t);
        let call_id = {
            let mut state = self.lock();
            let Some((call_id, last)) = state.calls.get_mut(&key(&p.progress_token)) else {
                return;
            };
            if !last_step && last.is_some_and(|at| at.elapsed() < PROGRESS_EVERY) {
                return;
            }
            *last = Some(Instant::now());
            call_id.clone()
        };
        self.emit(server, |server| Event::McpNotification {
            server,
            kind: NoticeKind::Progress,
            call_id: Some(call_id),
            level: None,
            progress: Some(p.progress),
            total: p.total,
            message: p.message.map(|m| bounded(&m)),
        });
    }

    fn log(&self, server: &str, p: LoggingMessageNotificationParam) {
        // rmcp's level and ours are the specification's words.
        let level = serde_json::to_value(p.level)
            .and_then(serde_json::from_value)
            .ok();
        let text = match (&p.logger, p.data) {
            (Some(logger), serde_json::Value::String(s)) => format!("{logger}: {s}"),
            (None, serde_json::Value::String(s)) => s,
            (Some(logger), other) => format!("{logger}: {other}"),
            (None, other) => other.to_string(),
        };
        self.emit(server, |server| Event::McpNotification {
            server,
            kind: NoticeKind::Log,
            call_id: None,
            level,
            progress: None,
            total: None,
            message: Some(bounded(&text)),
        });
    }

    /// Emit `event` unless the server has used up its events (the first one over says so).
    fn emit(&self, server: &str, event: impl FnOnce(String) -> Event) {
        let Some(emitter) = self.emitter.get() else {
            return;
        };
        let count = {
            let mut state = self.lock();
            let count = state.per_server.entry(server.to_owned()).or_default();
            *count += 1;
            *count
        };
        if count <= MAX_PER_SERVER {
            emitter.emit(event(server.to_owned()));
        } else if count == MAX_PER_SERVER + 1 {
            emitter.emit(Event::McpNotification {
                server: server.to_owned(),
                kind: NoticeKind::Suppressed,
                call_id: None,
                level: None,
                progress: None,
                total: None,
                message: Some(format!(
                    "the server sent more than {MAX_PER_SERVER} notifications; the rest are not recorded"
                )),
            });
        }
    }
}

fn key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// The client side of one server's connection: introduces cn-run and hands notifications on.
#[derive(Clone)]
pub(crate) struct Listener {
    pub(crate) server: String,
    pub(crate) notices: Arc<Notices>,
    pub(crate) info: ClientConfig,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notices.progress(&self.server, params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notices.log(&self.server, params);
    }
}
