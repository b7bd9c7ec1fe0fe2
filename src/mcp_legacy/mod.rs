//! The legacy era (2025-11-25) on the same `/mcp` endpoint, for clients that start with
//! `initialize` (the TypeScript SDK's and MCP Inspector's defaults).
//!
//! rmcp runs the sessions (`Mcp-Session-Id`, the handshake, the streams) and calls
//! [`handler`], which turns each tool call into the typed call the modern era builds too.
//! This is the one room that names rmcp: its service is built here ([`service`]) and the
//! edge hands it what is not the modern era's. grantry adds:
//!
//! - **Sessions in the store**, bound to their opener ([`Sessions`]). The edge records a new
//!   session with the caller's tag once `initialize` has answered, and refuses a request
//!   naming a session that is not the caller's as if it did not exist (404). A replica that
//!   has not seen a session restores it from the record (rmcp replays the handshake).
//! - **URL elicitation the legacy way**: a plain tool that needs a connection answers
//!   `-32042` with the connect link (`notices::url_elicitation_required`); when the grant lands,
//!   `notifications/elicitation/complete` goes to the session (`notices::notify_when_connected`).
//! - **Form rounds as `elicitation/create`** ([`questions::drive_rounds`]): the same rounds the modern
//!   era answers with `input_required` are asked on the call's stream and answered there.
//!
//! Files: [`handler`] (rmcp's `ServerHandler`), [`service`] (rmcp's service and settings),
//! [`session`] (what a call has of its session:
//! questions, notices, notifications), [`sessions`] (the store records, ownership), [`residents`] (which sessions stay in
//! memory here: a fair share of the cap, idle ones evicted to make room), [`streams`] (GET
//! streams: two per session, counted in the principal's share of held requests), [`notices`]
//! (`-32042` and `elicitation/complete`), [`questions`] (form rounds asked mid-call).

mod handler;
pub(crate) mod notices;
mod questions;
mod residents;
mod service;
pub(crate) mod session;
mod sessions;
mod streams;

use axum::body::Body;
use axum::http::header::{CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;

use crate::mcp_calls::call::Era;
use crate::mcp_calls::extension::ExtensionCall;

pub(crate) use handler::McpHandler;
pub(crate) use service::{Service, Settings, memory};
pub(crate) use sessions::{Opening, Sessions, is_initialize, opened_session, session_id};
pub(crate) use streams::{Open as OpenStream, Refused, Streams};

/// The edge's plain-text refusal, with `Retry-After: 60` where waiting a minute helps.
fn plain_refusal(status: StatusCode, text: &'static str, retry_later: bool) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if retry_later {
        headers.insert(RETRY_AFTER, HeaderValue::from_static("60"));
    }
    response
}

/// The legacy-era (2025-11-25) session `call` came in, to ask its client mid-call (the
/// conformance suite's fixtures); `None` in the modern era, which asks through
/// `input_required` instead.
pub fn session_context<'a>(call: &'a ExtensionCall<'_>) -> Option<&'a session::SessionContext> {
    match call.era() {
        Era::Modern(_) => None,
        Era::Legacy(session) => session
            .as_any()
            .downcast_ref::<session::LegacyCall>()
            .map(session::LegacyCall::context),
    }
}
