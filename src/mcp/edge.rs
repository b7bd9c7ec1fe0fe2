//! The HTTP edge in front of rmcp's `/mcp` service.
//!
//! - **Slow answers become SSE.** A call that has not answered within [`SWITCH_TO_SSE_AFTER`]
//!   (a retry held while the user signs in) is answered as `text/event-stream` with `:` comment
//!   keep-alives, and the JSON-RPC response as its one `message` event. Dropping the stream (the
//!   client went away) drops the call. Clients that accept only JSON just wait.
//! - **The wire matches 2026-07-28.** rmcp writes `"elicitationId": ""` into URL-mode requests,
//!   a field this revision removed; it is taken out here. rmcp answers a handler's `-32602`
//!   with HTTP 200; the spec's table (and the Python SDK) use 400, so it is set here. An
//!   ended legacy session is 204, not rmcp's 202 (nothing is pending).
//! - **Every answer says how it ended** ([`outcome`]): the endpoint counts requests by method
//!   and by outcome, read from the answer the edge already holds.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{ACCEPT, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use futures::future::BoxFuture;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;

use super::answers::{codes, internal_error, json_answer, jsonrpc_error};
use super::direct::{Direct, Taken};
use super::handler::McpHandler;
use super::legacy::{self, Opening, Sessions, Streams};
use crate::identity::Principal;
use crate::metrics::Outcome;
use crate::server::Tracked;

/// How long a call may take before its answer switches to an SSE stream.
pub(crate) const SWITCH_TO_SSE_AFTER: Duration = Duration::from_millis(500);
/// Largest JSON answer the edge buffers to rewrite (rmcp's own answers are far smaller).
const MAX_REWRITE_BYTES: usize = 8 * 1024 * 1024;

/// rmcp's `/mcp` service, shared by every request.
pub(crate) type Rmcp = StreamableHttpService<McpHandler, LocalSessionManager>;

/// The edge: what it needs to answer a request, built once.
pub(crate) struct Edge {
    /// Answers what it can (see [`super::direct`]); the rest goes to rmcp.
    pub direct: Option<Arc<Direct>>,
    pub sessions: Sessions,
    /// Legacy-era GET streams open, per session and per principal.
    pub streams: Streams,
    /// The interval between SSE comments.
    pub keep_alive: Duration,
    pub rmcp: Arc<Rmcp>,
}

/// How an answered request is counted: the outcome the answer carries, or its status's.
pub(crate) fn outcome(response: &Response) -> Outcome {
    let status = response.status();
    match response.extensions().get::<Outcome>() {
        Some(outcome) => *outcome,
        None if status.is_server_error() => Outcome::Failed,
        None if status.is_client_error() => Outcome::Refused,
        None => Outcome::Complete,
    }
}

impl Edge {
    /// Answers an admitted request.
    pub(crate) async fn answer(&self, request: Request) -> Response {
        // Only a modern request outside any session is held and answered as SSE here: a
        // legacy session's answers are rmcp's own streams, with headers (`Mcp-Session-Id`)
        // that must reach the client.
        let mut accepts_sse =
            legacy::is_modern(request.headers()) && accepts_event_stream(&request);
        // Keep the body: if rmcp cannot read it as a message, the answer depends on why.
        let (parts, body) = request.into_parts();
        let bytes = match read_body(body).await {
            Ok(bytes) => bytes,
            Err(refusal) => return refusal,
        };
        let in_use = match self.sessions.check_owner(&parts).await {
            Ok(in_use) => in_use,
            Err(refusal) => return refusal.into_response(),
        };
        let stream = match self.open_stream(&parts) {
            Ok(stream) => stream,
            Err(refused) => return refused.into_response(),
        };
        accepts_sse &= legacy::session_id(&parts).is_none();
        let mut call = match self.direct.as_deref().and_then(|d| d.take(&parts, &bytes)) {
            Some(Taken::Ready(response)) => return response,
            Some(Taken::Call(call)) => call,
            None => {
                let opening = match self.sessions.opening(&parts, &bytes).await {
                    Ok(opening) => opening,
                    Err(refusal) => return refusal.into_response(),
                };
                // An `initialize`'s answer carries its `Mcp-Session-Id`: never re-streamed.
                accepts_sse &= opening.is_none();
                let request = Request::from_parts(parts, Body::from(bytes.clone()));
                through_rmcp(self.rmcp.clone(), request, bytes, opening)
            }
        };
        let response = if accepts_sse {
            tokio::select! {
                response = &mut call => response,
                _ = tokio::time::sleep(SWITCH_TO_SSE_AFTER) => held_as_sse(call, self.keep_alive),
            }
        } else {
            call.await
        };
        match in_use {
            // The session stays in use (not evicted), and a GET stream holds its places,
            // while the answer streams.
            Some(in_use) => response.map(|body| Body::new(Tracked::new(body, (in_use, stream)))),
            None => response,
        }
    }

    /// A session's GET stream (checked as the caller's already) takes its places first.
    fn open_stream(&self, parts: &Parts) -> Result<Option<legacy::OpenStream>, legacy::Refused> {
        let (Some(session), Some(principal)) = (
            legacy::session_id(parts),
            parts.extensions.get::<Principal>(),
        ) else {
            return Ok(None);
        };
        if parts.method != axum::http::Method::GET {
            return Ok(None);
        }
        self.streams
            .open(session, &principal.tag())
            .map(Some)
            .inspect_err(|refused| {
                tracing::warn!(?refused, principal = %principal.tag(), "legacy GET stream refused");
            })
    }
}

fn accepts_event_stream(request: &Request) -> bool {
    request
        .headers()
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/event-stream"))
}

/// The whole body, or the answer to one too slow (408) or too large (413).
async fn read_body(body: Body) -> Result<Bytes, Response> {
    axum::body::to_bytes(body, super::MAX_REQUEST_BYTES)
        .await
        .map_err(|e| {
            let (status, message) = if crate::server::deadline::is_timeout(&e) {
                (
                    StatusCode::REQUEST_TIMEOUT,
                    "Request body not received in time",
                )
            } else {
                (StatusCode::PAYLOAD_TOO_LARGE, "Request body too large")
            };
            jsonrpc_error(status, codes::INVALID_REQUEST, message, Value::Null)
        })
}

/// rmcp's answer, with the wire mended where it differs from the spec. A session it opened
/// for an `initialize` is recorded before the client can use it.
fn through_rmcp(
    rmcp: Arc<Rmcp>,
    request: Request,
    body: Bytes,
    opening: Option<Opening>,
) -> BoxFuture<'static, Response> {
    let ends_session = request.method() == axum::http::Method::DELETE;
    Box::pin(async move {
        let mut response = rmcp.handle(request).await.map(Body::new);
        if ends_session && response.status() == StatusCode::ACCEPTED {
            // rmcp says 202 for an ended session; the SDKs expect 200 or 204 (the Python
            // SDK's client logs a warning on anything else), and nothing is pending.
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        if let Some(opening) = opening
            && let Some(id) = legacy::opened_session(&response)
            && let Err(refusal) = opening.record(&id).await
        {
            return refusal.into_response();
        }
        // rmcp answers a body it cannot read as a message with a plain-text 415.
        if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
            && let Some(unreadable) = super::malformed::classify(&body)
        {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                unreadable.code,
                unreadable.message,
                unreadable.id,
            );
        }
        if response.status() == StatusCode::BAD_REQUEST && !is_json(&response) {
            return unsupported_version(response, &body).await;
        }
        fix_json(response).await
    })
}

/// rmcp refuses a version header it does not know (on `initialize` and in sessions) with a
/// plain-text 400; the spec's answer is `-32022` naming the versions grantry speaks, so that
/// a client can pick one. Any other plain-text 400 passes unchanged.
async fn unsupported_version(response: Response, request: &[u8]) -> Response {
    const PREFIX: &[u8] = b"Bad Request: Unsupported MCP-Protocol-Version: ";
    let (parts, body) = response.into_parts();
    let Ok(text) = axum::body::to_bytes(body, MAX_REWRITE_BYTES).await else {
        return internal_error();
    };
    let Some(requested) = text.strip_prefix(PREFIX) else {
        return Response::from_parts(parts, Body::from(text));
    };
    let id = serde_json::from_slice::<Value>(request)
        .ok()
        .and_then(|m| m.get("id").cloned())
        .unwrap_or(Value::Null);
    let versions = super::supported_versions();
    let supported: Vec<&str> = versions.iter().map(|v| v.as_str()).collect();
    json_answer(
        StatusCode::BAD_REQUEST,
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": codes::UNSUPPORTED_VERSION.0,
                "message": "Unsupported protocol version",
                "data": {"supported": supported, "requested": String::from_utf8_lossy(requested)},
            },
        }),
    )
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// Rewrites a JSON-RPC answer where rmcp's wire differs from the spec; anything else passes.
async fn fix_json(response: Response) -> Response {
    if !is_json(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REWRITE_BYTES).await else {
        return internal_error();
    };
    let (bytes, invalid_params) = rewrite(bytes);
    if invalid_params && parts.status == StatusCode::OK {
        parts.status = StatusCode::BAD_REQUEST;
    }
    parts
        .headers
        .insert(CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    parts.extensions.insert(Outcome::of_json(&bytes));
    Response::from_parts(parts, Body::from(bytes))
}

/// Returns the answer without empty `elicitationId`s, and whether it is a `-32602` error.
fn rewrite(bytes: Bytes) -> (Bytes, bool) {
    let invalid_params = contains(&bytes, b"\"code\":-32602")
        && serde_json::from_slice::<Value>(&bytes)
            .is_ok_and(|m| m["error"]["code"].as_i64() == Some(-32602));
    match without_empty_elicitation_ids(&bytes) {
        Some(stripped) => (stripped, invalid_params),
        None => (bytes, invalid_params),
    }
}

/// Removes every `"elicitationId":""` member with its comma, on the bytes: inside a JSON
/// string its quotes would be escaped, so the sequence only ever is a member. `None` when
/// there is none (the usual case: nothing is copied).
fn without_empty_elicitation_ids(bytes: &[u8]) -> Option<Bytes> {
    const MEMBER: &[u8] = br#""elicitationId":"""#;
    let finder = memchr::memmem::Finder::new(MEMBER);
    finder.find(bytes)?;
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = finder.find(rest) {
        let (before, after) = (&rest[..at], &rest[at + MEMBER.len()..]);
        if let Some(before) = before.strip_suffix(b",") {
            out.extend_from_slice(before);
            rest = after;
        } else {
            out.extend_from_slice(before);
            rest = after.strip_prefix(b",").unwrap_or(after);
        }
    }
    out.extend_from_slice(rest);
    Some(Bytes::from(out))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// What the SSE body is doing.
enum Phase {
    /// Waiting for the call; a keep-alive on every tick.
    Waiting(BoxFuture<'static, Response>, tokio::time::Interval),
    /// The call answered with a stream of its own (rmcp's SSE): forward its frames.
    Forwarding(axum::body::BodyDataStream),
    Done,
}

fn held_as_sse(call: BoxFuture<'static, Response>, keep_alive: Duration) -> Response {
    let mut interval = tokio::time::interval(keep_alive);
    interval.reset(); // the first comment after one interval, not at once
    let stream = futures::stream::unfold(Phase::Waiting(call, interval), |phase| async move {
        match phase {
            Phase::Waiting(mut call, mut interval) => {
                tokio::select! {
                    response = &mut call => {
                        if is_json(&response) {
                            let bytes = match axum::body::to_bytes(response.into_body(), MAX_REWRITE_BYTES).await {
                                Ok(bytes) => bytes,
                                Err(_) => Bytes::from_static(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#),
                            };
                            let mut event = b"event: message\ndata: ".to_vec();
                            event.extend_from_slice(&bytes);
                            event.extend_from_slice(b"\n\n");
                            Some((Ok::<_, std::io::Error>(Bytes::from(event)), Phase::Done))
                        } else {
                            let mut data = response.into_body().into_data_stream();
                            match data.next().await {
                                Some(Ok(frame)) => Some((Ok(frame), Phase::Forwarding(data))),
                                _ => None,
                            }
                        }
                    }
                    _ = interval.tick() => {
                        Some((Ok(Bytes::from_static(b": keep-alive\n\n")), Phase::Waiting(call, interval)))
                    }
                }
            }
            Phase::Forwarding(mut data) => match data.next().await {
                Some(Ok(frame)) => Some((Ok(frame), Phase::Forwarding(data))),
                _ => None,
            },
            Phase::Done => None,
        }
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response.extensions_mut().insert(Outcome::Streamed);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_elicitation_id_members_are_removed_first_middle_or_last_and_text_is_kept() {
        let body = br#"{"a":{"elicitationId":"","mode":"url"},"b":{"mode":"url","elicitationId":"","url":"u"},"c":{"elicitationId":""},"t":"say \"elicitationId\":\"\" here"}"#;
        let (out, _) = rewrite(Bytes::from_static(body));
        let v: Value = serde_json::from_slice(&out).expect("still JSON");
        assert_eq!(
            v,
            serde_json::json!({"a": {"mode": "url"}, "b": {"mode": "url", "url": "u"}, "c": {}, "t": "say \"elicitationId\":\"\" here"})
        );
        let untouched = br#"{"x":1}"#;
        assert_eq!(rewrite(Bytes::from_static(untouched)).0.as_ref(), untouched);
    }

    #[test]
    fn empty_elicitation_ids_are_removed_from_url_requests() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"http://x/connect/t","elicitationId":""}}},"requestState":"s"}}"#;
        let (out, invalid) = rewrite(Bytes::from_static(body));
        assert!(!invalid);
        let v: Value = serde_json::from_slice(&out).unwrap();
        let params = &v["result"]["inputRequests"]["a"]["params"];
        assert!(params.get("elicitationId").is_none());
        assert_eq!(params["url"], "http://x/connect/t");
    }

    #[test]
    fn invalid_params_errors_are_detected() {
        let body = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid or expired requestState"}}"#;
        let (_, invalid) = rewrite(Bytes::from_static(body));
        assert!(invalid);
        let text = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"code\":-32602"}]}}"#;
        assert!(!rewrite(Bytes::from_static(text)).1);
    }
}
