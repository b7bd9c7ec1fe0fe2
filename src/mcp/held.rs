//! A modern call's answer held as SSE: a call that sends a notification first, or that takes
//! longer than the edge waits (a retry held while the person signs in), is answered as
//! `text/event-stream`, with its notifications and `:` comment keep-alives, and the JSON-RPC
//! response as its last `message` event. Dropping the stream (the client went away) drops
//! the call.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::Response;
use futures::StreamExt;
use futures::future::BoxFuture;

use crate::mcp_wire::notify::Notifications;
use crate::metrics::Outcome;

/// Largest answer read into the stream's last event (grantry's answers are far smaller).
const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// The next notification a call sends; never, for a call that sends none.
pub(super) async fn next_note(notifications: &mut Option<Notifications>) -> Option<Bytes> {
    match notifications {
        Some(receiver) => match receiver.recv().await {
            Some(note) => Some(note),
            None => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

/// What the SSE body is doing.
enum Phase {
    /// Waiting for the call; its notifications as they come, a keep-alive on every tick.
    Waiting {
        answer: BoxFuture<'static, Response>,
        notifications: Option<Notifications>,
        interval: tokio::time::Interval,
    },
    Done,
}

/// The call's answer as an SSE stream: `first` (a notification already sent) first, then any
/// later notifications and keep-alive comments, then the answer.
pub(super) fn as_sse(
    answer: BoxFuture<'static, Response>,
    notifications: Option<Notifications>,
    first: Option<Bytes>,
    keep_alive: Duration,
) -> Response {
    let mut interval = tokio::time::interval(keep_alive);
    interval.reset(); // the first comment after one interval, not at once
    let waiting = Phase::Waiting {
        answer,
        notifications,
        interval,
    };
    let first = futures::stream::iter(first.map(|note| Ok::<_, std::io::Error>(event(&note))));
    let rest = futures::stream::unfold(waiting, |phase| async move {
        let Phase::Waiting {
            mut answer,
            mut notifications,
            mut interval,
        } = phase
        else {
            return None;
        };
        tokio::select! {
            response = &mut answer => Some((Ok(last_event(response).await), Phase::Done)),
            Some(note) = next_note(&mut notifications) => {
                let waiting = Phase::Waiting { answer, notifications, interval };
                Some((Ok(event(&note)), waiting))
            }
            _ = interval.tick() => {
                let waiting = Phase::Waiting { answer, notifications, interval };
                Some((Ok(Bytes::from_static(b": keep-alive\n\n")), waiting))
            }
        }
    });
    let stream = first.chain(rest);
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response.extensions_mut().insert(Outcome::Streamed);
    response
}

/// One `message` event carrying `message`.
fn event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The answer's JSON-RPC message as the stream's last event.
async fn last_event(response: Response) -> Bytes {
    const FAILED: &[u8] =
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#;
    match axum::body::to_bytes(response.into_body(), MAX_ANSWER_BYTES).await {
        Ok(bytes) => event(&bytes),
        Err(_) => event(FAILED),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::*;
    use crate::mcp_wire::jsonrpc;

    #[tokio::test]
    async fn a_held_answer_streams_its_notifications_keep_alives_and_then_itself() {
        let (sink, notifications) = tokio::sync::mpsc::unbounded_channel();
        let answer: BoxFuture<'static, Response> = Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(60)).await;
            sink.send(Bytes::from_static(b"{\"second\":1}")).unwrap();
            tokio::time::sleep(Duration::from_millis(60)).await;
            jsonrpc::json_response(
                StatusCode::OK,
                Bytes::from_static(b"{\"done\":1}"),
                Outcome::Complete,
            )
        });
        let first = Some(Bytes::from_static(b"{\"first\":1}"));
        let response = as_sse(
            answer,
            Some(notifications),
            first,
            Duration::from_millis(20),
        );
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
        assert_eq!(events.first(), Some(&"event: message\ndata: {\"first\":1}"));
        assert!(
            events.contains(&"event: message\ndata: {\"second\":1}"),
            "{text}"
        );
        assert!(events.contains(&": keep-alive"), "{text}");
        assert_eq!(events.last(), Some(&"event: message\ndata: {\"done\":1}"));
    }
}
