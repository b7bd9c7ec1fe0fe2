//! The client's side: one JSON-RPC message per line on stdin and stdout. Lines are read
//! with a bound on their length, and a line that is not UTF-8 is a line like any other (the
//! bridge answers it with an error and goes on). Answers and notifications go through one
//! writer task, so lines never interleave; the bridge's own requests to the client
//! (`elicitation/create`) wait here for their answers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::wire::{self, Outcome};

/// The longest line the client may send: far above any tool call's arguments, and a bound on
/// what one line can make the bridge hold.
pub(super) const MAX_LINE_BYTES: usize = 16 << 20;

/// One line of the client's input, without its end.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line {
    Text(String),
    /// Not UTF-8, so not JSON.
    NotUtf8,
    /// Longer than [`MAX_LINE_BYTES`]; what it held was dropped as it came.
    TooLong,
}

/// The next line of `input`, or `None` at its end.
pub(super) async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let end = memchr::memchr(b'\n', available);
        let part = &available[..end.unwrap_or(available.len())];
        too_long = too_long || line.len() + part.len() > MAX_LINE_BYTES;
        if too_long {
            line = Vec::new();
        } else {
            line.extend_from_slice(part);
        }
        let used = end.map_or(available.len(), |end| end + 1);
        input.consume(used);
        if end.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(
        String::from_utf8(line).map_or(Line::NotUtf8, Line::Text),
    ))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(input: &[u8]) -> Vec<Line> {
        let mut reader = tokio::io::BufReader::with_capacity(4093, input);
        let mut lines = Vec::new();
        while let Some(line) = read_line(&mut reader).await.unwrap() {
            lines.push(line);
        }
        lines
    }

    #[tokio::test]
    async fn a_line_that_is_not_utf8_or_too_long_is_one_line_among_the_others() {
        let mut input = b"{\"a\":1}\r\n\xff\xfe\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        input.extend(b"\nlast");
        assert_eq!(
            lines_of(&input).await,
            [
                Line::Text("{\"a\":1}".into()),
                Line::NotUtf8,
                Line::TooLong,
                Line::Text("last".into()),
            ]
        );
        let exactly = vec![b'x'; MAX_LINE_BYTES];
        assert_eq!(
            lines_of(&exactly).await,
            [Line::Text("x".repeat(MAX_LINE_BYTES))]
        );
    }
}
