//! The HTTP edge of `/mcp`: what every request goes through before and after its era.
//!
//! - **One reading, then the era.** The body is read whole, a legacy session's owner and GET
//!   streams checked, and [`Modern::read`] takes what is this era's; the rest goes to rmcp.
//! - **Slow answers become SSE.** A modern call that has not answered within
//!   [`SWITCH_TO_SSE_AFTER`] (a retry held while the user signs in), or that sends a
//!   notification first, is answered as `text/event-stream`, with `:` comment keep-alives and
//!   the JSON-RPC response as its last `message` event. Dropping the stream (the client went
//!   away) drops the call.
//! - **rmcp's legacy answers, mended where they differ from what clients expect**: a handler's
//!   `-32602` is HTTP 400 (as the spec's table and the Python SDK give it), an ended session is
//!   204 rather than 202, an unreadable body and an unknown version header get JSON-RPC errors.
//! - **Every answer says how it ended** ([`outcome`]): the endpoint counts requests by method
//!   and by outcome, read from the answer the edge already holds.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::identity::Principal;
use crate::mcp::auth::ToolScopeCheck;
use crate::mcp::held;
use crate::mcp::modern::{self, Modern, Read};
use crate::mcp_calls::dispatch::Dispatch;
use crate::mcp_calls::registry::{Listed, Registry};
use crate::mcp_calls::results::CallAnswer;
use crate::mcp_calls::tasks_extension::{Candidate, Made, Refused, Tasks};
use crate::mcp_legacy::{self as legacy, Opening, Sessions, Streams};
use crate::mcp_wire::describe;
use crate::mcp_wire::headers::MCP_METHOD;
use crate::mcp_wire::jsonrpc::{self, ErrorCode, ReplyTo, RequestId, RpcError};
use crate::metrics::Outcome;
use crate::server::Tracked;

/// How long a call may take before its answer switches to an SSE stream.
pub(crate) const SWITCH_TO_SSE_AFTER: Duration = Duration::from_millis(500);
/// Largest JSON answer the edge buffers to rewrite (rmcp's own answers are far smaller).
const MAX_REWRITE_BYTES: usize = 8 * 1024 * 1024;

/// The edge: what it needs to answer a request, built once.
pub(crate) struct Edge {
    pub(crate) modern: Modern,
    pub(crate) dispatch: Arc<Dispatch>,
    /// Tasks, for calls from clients that declare the extension.
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) sessions: Sessions,
    /// Legacy-era GET streams open, per session and per principal.
    pub(crate) streams: Streams,
    /// The interval between SSE comments.
    pub(crate) keep_alive: Duration,
    /// rmcp's service, for the legacy era.
    pub(crate) legacy: Arc<legacy::Service>,
    /// Where tools need scopes of their own: the check, and the tools by name for the
    /// legacy era's bodies.
    pub(crate) tool_scopes: Option<(ToolScopeCheck, Arc<Registry>)>,
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
    /// Answers an admitted request, in its span (the caller's trace continued) when traces
    /// are on.
    pub(crate) async fn answer(&self, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        let bytes = match read_body(body).await {
            Ok(bytes) => bytes,
            Err(refusal) => return refusal,
        };
        // A legacy-era request (no `Mcp-Method`) goes to rmcp, whose session would keep the
        // span of the request that opened it for all its calls: its calls get spans of their
        // own (`spans::legacy_call`).
        if !crate::telemetry::enabled() || !parts.headers.contains_key(&MCP_METHOD) {
            return self.answer_read(parts, bytes).await;
        }
        let Some(span) =
            crate::mcp_wire::spans::request(&parts, &bytes, |name| self.modern.knows_tool(name))
        else {
            return self.answer_read(parts, bytes).await;
        };
        let response =
            crate::telemetry::context::in_request(span.clone(), self.answer_read(parts, bytes))
                .await;
        crate::mcp_wire::spans::answered(&span, response.status().as_u16(), outcome(&response));
        response
    }

    /// Answers a request whose body is read.
    async fn answer_read(&self, parts: Parts, bytes: Bytes) -> Response {
        let in_use = match self.sessions.check_owner(&parts).await {
            Ok(in_use) => in_use,
            Err(refusal) => return refusal.into_response(),
        };
        let stream = match self.open_stream(&parts) {
            Ok(stream) => stream,
            Err(refused) => return refused.into_response(),
        };
        let response = match self.modern.read(&parts, &bytes) {
            Read::Answered(response) => response,
            Read::Task(request, to) => {
                let gate = |tool: &Listed| self.scope_refusal(&parts, Some(tool));
                match self.tasks.answer(*request, &gate).await {
                    Ok(answer) => jsonrpc::result_response(&to, &answer, Outcome::Complete),
                    Err(Refused::Rpc(error)) => jsonrpc::error_response(&to, &error),
                    Err(Refused::Gate(refusal)) => refusal,
                }
            }
            Read::Call(call) => match self.scope_refusal(&parts, Some(&call.call.tool.listed())) {
                Some(refusal) => refusal,
                None => self.held(*call).await,
            },
            Read::Legacy if let Some(refusal) = self.legacy_scope_refusal(&parts, &bytes) => {
                refusal
            }
            Read::Legacy => match self.sessions.opening(&parts, &bytes).await {
                Ok(opening) => {
                    let request = Request::from_parts(parts, Body::from(bytes.clone()));
                    // Boxed: rmcp's future is large, and would make every request's as large.
                    Box::pin(through_legacy(self.legacy.clone(), request, bytes, opening)).await
                }
                Err(refusal) => return refusal.into_response(),
            },
        };
        match in_use {
            // The session stays in use (not evicted), and a GET stream holds its places,
            // while the answer streams.
            Some(in_use) => response.map(|body| Body::new(Tracked::new(body, (in_use, stream)))),
            None => response,
        }
    }

    /// The 403 for a call of `tool` whose token lacks the scopes the tool needs.
    fn scope_refusal(&self, parts: &Parts, tool: Option<&Listed>) -> Option<Response> {
        let (check, _) = self.tool_scopes.as_ref()?;
        match tool? {
            Listed::Own(tool) => check.refusal(parts, tool.access()),
            Listed::Added(_) => None,
        }
    }

    /// The same for a legacy-era `tools/call`, read from its body (only where tools need
    /// scopes of their own). Read as any JSON, as rmcp reads it after: a body this check could
    /// not read must not be one rmcp runs unchecked (a repeated key, a batch).
    fn legacy_scope_refusal(&self, parts: &Parts, body: &Bytes) -> Option<Response> {
        let (_, registry) = self.tool_scopes.as_ref()?;
        let body: Value = serde_json::from_slice(body).ok()?;
        let messages = match &body {
            Value::Array(batch) => batch.iter().collect(),
            message => vec![message],
        };
        messages
            .into_iter()
            .filter(|message| message["method"] == "tools/call")
            .filter_map(|message| message["params"]["name"].as_str())
            .find_map(|name| self.scope_refusal(parts, registry.find(name).map(|e| &e.listed)))
    }

    /// A modern call, answered as JSON if it ends soon and says nothing before, as SSE
    /// otherwise.
    async fn held(&self, read: modern::Call) -> Response {
        let modern::Call {
            call,
            reply_to,
            notifications,
        } = read;
        let (dispatch, tasks) = (self.dispatch.clone(), self.tasks.clone());
        let candidate = Candidate::of(&call);
        let job = dispatch.background(&call);
        let mut answer: BoxFuture<'static, Response> = Box::pin(async move {
            // Work the extension runs as a task: the task, at once.
            if let Some(job) = job {
                return match tasks.run(Candidate::new(&call), job).await {
                    Ok(task) => jsonrpc::result_response(&reply_to, &task, Outcome::Task),
                    Err(error) => jsonrpc::error_response(&reply_to, &error),
                };
            }
            match (dispatch.call(call).await, candidate) {
                // A round, for a client that takes tasks: the task instead.
                (Ok(CallAnswer::InputRequired(round)), Some(candidate)) => {
                    match tasks.create(candidate, round).await {
                        Ok(Made::Task(task)) => {
                            jsonrpc::result_response(&reply_to, &task, Outcome::Task)
                        }
                        Ok(Made::Round(round)) => {
                            let answer = CallAnswer::InputRequired(round);
                            jsonrpc::result_response(&reply_to, &answer, answer.outcome())
                        }
                        Err(error) => jsonrpc::error_response(&reply_to, &error),
                    }
                }
                (Ok(answer), _) => jsonrpc::result_response(&reply_to, &answer, answer.outcome()),
                (Err(error), _) => jsonrpc::error_response(&reply_to, &error),
            }
        });
        let mut notifications = notifications;
        let first = tokio::select! {
            response = &mut answer => return response,
            note = held::next_note(&mut notifications) => note,
            _ = tokio::time::sleep(SWITCH_TO_SSE_AFTER) => None,
        };
        // Held on inside an SSE body: still in the request's span, however long it goes on.
        let answer = Box::pin(crate::telemetry::context::carried(answer));
        held::as_sse(answer, notifications, first, self.keep_alive)
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

/// The whole body, or the answer to one too slow (408) or too large (413).
async fn read_body(body: Body) -> Result<Bytes, Response> {
    axum::body::to_bytes(body, describe::MAX_REQUEST_BYTES)
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
            jsonrpc::refusal(status, ErrorCode::INVALID_REQUEST, message)
        })
}

/// rmcp's answer, mended where it differs from what clients expect. A session it opened for
/// an `initialize` is recorded before the client can use it.
async fn through_legacy(
    service: Arc<legacy::Service>,
    request: Request,
    body: Bytes,
    opening: Option<Opening>,
) -> Response {
    let ends_session = request.method() == axum::http::Method::DELETE;
    let mut response = service.handle(request).await;
    if ends_session && response.status() == StatusCode::ACCEPTED {
        // rmcp says 202 for an ended session; the SDKs expect 200 or 204 (the Python SDK's
        // client logs a warning on anything else), and nothing is pending.
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
        && let Some(unreadable) = crate::mcp_wire::malformed::classify(&body)
    {
        let to = RequestId::read(&unreadable.id).map_or(ReplyTo::Unknown, ReplyTo::Id);
        let error = RpcError::new(unreadable.code, unreadable.message);
        return jsonrpc::json_response(
            StatusCode::BAD_REQUEST,
            jsonrpc::error_bytes(&to, &error),
            Outcome::Error,
        );
    }
    if response.status() == StatusCode::BAD_REQUEST && !is_json(&response) {
        return unsupported_version(response, &body).await;
    }
    with_invalid_params_status(response).await
}

/// rmcp refuses a version header it does not know (on `initialize` and in sessions) with a
/// plain-text 400; the spec's answer is `-32022` naming the versions grantry speaks, so that
/// a client can pick one. Any other plain-text 400 passes unchanged.
async fn unsupported_version(response: Response, request: &[u8]) -> Response {
    const PREFIX: &[u8] = b"Bad Request: Unsupported MCP-Protocol-Version: ";
    let (parts, body) = response.into_parts();
    let Ok(text) = axum::body::to_bytes(body, MAX_REWRITE_BYTES).await else {
        return jsonrpc::internal_error();
    };
    let Some(requested) = text.strip_prefix(PREFIX) else {
        return Response::from_parts(parts, Body::from(text));
    };
    let to = serde_json::from_slice::<Value>(request)
        .ok()
        .and_then(|m| m.get("id").and_then(RequestId::read))
        .map_or(ReplyTo::Unknown, ReplyTo::Id);
    let error = RpcError::new(
        ErrorCode::UNSUPPORTED_VERSION,
        "Unsupported protocol version",
    )
    .with_data(serde_json::json!({
        "supported": describe::SUPPORTED_VERSIONS,
        "requested": String::from_utf8_lossy(requested),
    }));
    jsonrpc::error_response(&to, &error)
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// A JSON answer of rmcp's, with HTTP 400 where it carries a `-32602` (rmcp says 200).
async fn with_invalid_params_status(response: Response) -> Response {
    if !is_json(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REWRITE_BYTES).await else {
        return jsonrpc::internal_error();
    };
    if parts.status == StatusCode::OK && is_invalid_params(&bytes) {
        parts.status = StatusCode::BAD_REQUEST;
    }
    parts
        .headers
        .insert(CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    parts.extensions.insert(Outcome::of_json(&bytes));
    Response::from_parts(parts, Body::from(bytes))
}

/// Whether a JSON-RPC answer is a `-32602` error.
fn is_invalid_params(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"\"code\":-32602").is_some()
        && serde_json::from_slice::<Value>(bytes)
            .is_ok_and(|m| m["error"]["code"].as_i64() == Some(-32602))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_params_errors_are_detected() {
        let body = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid or expired requestState"}}"#;
        assert!(is_invalid_params(body));
        let text = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"code\":-32602"}]}}"#;
        assert!(!is_invalid_params(text));
    }
}
