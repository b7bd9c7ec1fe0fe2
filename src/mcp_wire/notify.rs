//! The notifications a 2026-07-28 call sends on its own answer stream (progress; log messages
//! when the request asked for a level): the edge turns the answer into SSE at the first one.
//! Only an extension's tools send any; grantry's own calls get a notifier that sends nothing.

use axum::body::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A log message's severity, least first (RFC 5424's, as MCP names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// Where a call's notifications go, and what the request said of them.
pub(crate) struct Notifier {
    sink: Option<mpsc::UnboundedSender<Bytes>>,
    progress_token: Option<Value>,
    log_level: Option<LogLevel>,
}

/// What the edge reads a call's notifications from.
pub(crate) type Notifications = mpsc::UnboundedReceiver<Bytes>;

impl Notifier {
    /// A notifier for a call that sends nothing.
    pub(crate) fn silent() -> Self {
        Self {
            sink: None,
            progress_token: None,
            log_level: None,
        }
    }

    /// A notifier for the request's token and level, and the stream the edge reads.
    pub(crate) fn open(
        progress_token: Option<Value>,
        log_level: Option<LogLevel>,
    ) -> (Self, Notifications) {
        let (sink, notifications) = mpsc::unbounded_channel();
        let notifier = Self {
            sink: Some(sink),
            progress_token,
            log_level,
        };
        (notifier, notifications)
    }

    /// `notifications/progress`, when the request gave a progress token.
    pub(crate) fn progress(&self, progress: f64, total: Option<f64>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        self.send("notifications/progress", params);
    }

    /// `notifications/message`, when the request asked for `level` or a lower one.
    pub(crate) fn log(&self, level: LogLevel, data: Value) {
        if self.log_level.is_some_and(|asked| level >= asked) {
            self.send(
                "notifications/message",
                json!({"level": level, "data": data}),
            );
        }
    }

    fn send(&self, method: &str, params: Value) {
        let Some(sink) = &self.sink else {
            return;
        };
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        // The edge stopped reading: the client went away, and so does the notification.
        let _ = sink.send(Bytes::from(message.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_request_asked_for_is_sent() {
        let (notifier, mut sent) = Notifier::open(Some(json!(1)), Some(LogLevel::Info));
        notifier.progress(50.0, Some(100.0));
        notifier.log(LogLevel::Debug, json!("quiet"));
        notifier.log(LogLevel::Warning, json!("loud"));
        let first: Value = serde_json::from_slice(&sent.try_recv().unwrap()).unwrap();
        assert_eq!(
            first,
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 50.0, "total": 100.0}})
        );
        let second: Value = serde_json::from_slice(&sent.try_recv().unwrap()).unwrap();
        assert_eq!(
            second["params"],
            json!({"level": "warning", "data": "loud"})
        );
        assert!(sent.try_recv().is_err());

        let (quiet, mut nothing) = Notifier::open(None, None);
        quiet.progress(1.0, None);
        quiet.log(LogLevel::Emergency, json!("x"));
        assert!(nothing.try_recv().is_err());
    }
}
