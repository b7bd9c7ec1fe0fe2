//! The client's side: one JSON-RPC message per line on stdin and stdout. Answers and
//! notifications go through one writer task, so lines never interleave; the bridge's own
//! requests to the client (`elicitation/create`) wait here for their answers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::wire::{self, Outcome};

/// Why a request to the client got no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum ClientGone {
    #[error("the client closed its input")]
    Closed,
}

pub(super) struct ClientLink {
    out: mpsc::UnboundedSender<String>,
    next_id: AtomicU64,
    waiting: Mutex<HashMap<String, oneshot::Sender<Outcome>>>,
}

impl ClientLink {
    /// The link, and the task that writes its lines to `output` until every sender is gone.
    pub(super) fn new<W>(output: W) -> (Self, tokio::task::JoinHandle<()>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, lines) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_lines(output, lines));
        let link = Self {
            out,
            next_id: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
        };
        (link, writer)
    }

    pub(super) fn send(&self, message: &Value) {
        // Only fails once the writer has stopped, when the client is gone anyway.
        let _ = self.out.send(message.to_string());
    }

    pub(super) fn notify(&self, method: &str, params: Value) {
        self.send(&wire::notification(method, params));
    }

    /// Sends a request to the client and waits for its answer.
    pub(super) async fn request(&self, method: &str, params: Value) -> Result<Outcome, ClientGone> {
        let id = format!(
            "grantry-bridge-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let (answer, answered) = oneshot::channel();
        self.waiting().insert(id.clone(), answer);
        // A call cancelled while it waits leaves no entry behind.
        let _forget = Forget {
            link: self,
            id: &id,
        };
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        answered.await.map_err(|_| ClientGone::Closed)
    }

    /// Hands the client's answer to the request waiting for it; answers to nothing are dropped.
    pub(super) fn deliver(&self, id: &Value, outcome: Outcome) {
        let Some(id) = id.as_str() else { return };
        if let Some(waiting) = self.waiting().remove(id) {
            let _ = waiting.send(outcome);
        }
    }

    /// Ends every wait for an answer (the client's input has closed).
    pub(super) fn close(&self) {
        self.waiting().clear();
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Outcome>>> {
        self.waiting.lock().expect("waiting lock is never poisoned")
    }
}

/// Removes a request's wait for its answer when the request is done or dropped.
struct Forget<'a> {
    link: &'a ClientLink,
    id: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.link.waiting().remove(self.id);
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut lines: mpsc::UnboundedReceiver<String>,
) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if output.write_all(line.as_bytes()).await.is_err() || output.flush().await.is_err() {
            tracing::warn!("stdout is closed; the client is gone");
            return;
        }
    }
}
