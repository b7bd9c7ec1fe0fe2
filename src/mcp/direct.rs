//! The direct path: the common requests answered without rmcp's per-request machinery.
//!
//! rmcp serves every request through a spawned task, a one-shot transport, its message enums
//! (deserialized through serde's buffered `Content`) and a `serde_json::Value` copy of the
//! message for the header checks: over half of a `server/discover`. Here, `server/discover`,
//! `tools/list` and `tools/call` of grantry's plain tools (`list_invoices`, `list_connections`),
//! in their well-formed 2026-07-28 form, are answered directly.
//!
//! - **Acceptance is a strict subset of rmcp's.** A request is taken only when every header
//!   and field is in its plain, canonical form (see [`Direct::take`]); anything else, every
//!   malformed request included, goes to rmcp, which owns every refusal.
//! - **Answers are rmcp's.** Discovery and the tool list are serialized once, at start, from
//!   the handler's own values. Tool calls run the code rmcp's path runs ([`plain_call`]); their
//!   result is the JSON rmcp's types are built from on rmcp's path, written as is (errors
//!   through rmcp's message type), with the statuses rmcp and the edge give.
//! - `--mcp-direct-path false` sends everything through rmcp; `tests/e2e/direct_path.rs`
//!   sends the same requests to both and compares the answers.

use axum::body::{Body, Bytes};
use axum::http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use futures::future::BoxFuture;
use rmcp::model::{
    ErrorCode, ErrorData, InputResponses, NumberOrString, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::MODERN_VERSION;
use super::handler::McpHandler;
use super::headers::{MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION};
use super::known_meta::KnownMetas;
use super::plain_call::{self, PlainCall, Retry};
use crate::identity::Principal;
use crate::metrics::{self, Outcome};
use crate::server::hosts::AllowedHosts;
use crate::state::AppState;

/// What [`Direct::take`] made of a request.
pub(crate) enum Taken {
    /// Answered already (`server/discover`, `tools/list`).
    Ready(Response),
    /// A tool call, answered when it completes (it may hold while the user signs in).
    Call(BoxFuture<'static, Response>),
}

/// Built once at start; shared by every request.
pub(crate) struct Direct {
    state: AppState,
    /// The `Host` values rmcp is configured to allow.
    hosts: AllowedHosts,
    discover: Box<RawValue>,
    tool_list: Box<RawValue>,
    metas: KnownMetas,
}

impl Direct {
    pub(crate) fn new(state: AppState, handler: &McpHandler, hosts: AllowedHosts) -> Self {
        let discover = ServerResult::DiscoverResult(handler.discovery());
        let tool_list = ServerResult::ListToolsResult(handler.tool_list());
        Self {
            hosts,
            discover: to_raw(&discover),
            tool_list: to_raw(&tool_list),
            metas: KnownMetas::default(),
            state,
        }
    }

    /// Takes the request if it is one the direct path answers exactly as rmcp would; `None`
    /// sends it to rmcp.
    pub(crate) fn take(&self, parts: &Parts, body: &[u8]) -> Option<Taken> {
        if parts.method != axum::http::Method::POST
            || parts.uri.authority().is_some()
            || !self.plain_headers(&parts.headers)
        {
            return None;
        }
        let message: Message<'_> = serde_json::from_slice(body).ok()?;
        if message.jsonrpc != "2.0" || single(&parts.headers, &MCP_METHOD)? != message.method {
            return None;
        }
        let id = request_id(message.id)?;
        let params = message.params?;
        let taken = match message.method {
            "server/discover" if params.is_meta_only() => {
                self.metas.capabilities(params.meta)?;
                Some(Taken::Ready(ready_answer(&id, &self.discover)))
            }
            "tools/list" if params.is_meta_only() => {
                self.metas.capabilities(params.meta)?;
                Some(Taken::Ready(ready_answer(&id, &self.tool_list)))
            }
            "tools/call" => self.take_call(parts, params, id),
            _ => None,
        };
        if taken.is_some() {
            metrics::direct_answer(metrics::method_label(Some(message.method)));
        }
        taken
    }

    fn take_call(&self, parts: &Parts, params: Params<'_>, id: Id) -> Option<Taken> {
        let name: &str = serde_json::from_str(params.name.0?.get()).ok()?;
        if single(&parts.headers, &MCP_NAME)? != name {
            return None;
        }
        // The one lookup of the tool by its name on this path.
        let tool = plain_call::plain_tool(name)?;
        let arguments: Option<Map<String, Value>> = params.arguments.read()?;
        // An argument mirrored into an `Mcp-Param-*` header (SEP-2243) is checked against it
        // by rmcp: such a call is rmcp's.
        if let Some(arguments) = &arguments
            && plain_call::mirrors_any(tool, arguments)
        {
            return None;
        }
        let request_state: Option<&str> = params.request_state.read()?;
        let responses: Option<InputResponses> = params.input_responses.read()?;
        let capabilities = self.metas.capabilities(params.meta)?;
        let principal = parts.extensions.get::<Principal>()?.clone();
        let arguments = arguments.unwrap_or_default();
        let request_state = request_state.map(str::to_owned);
        let responses = responses.map(|r| r.into_iter().collect::<Map<String, Value>>());
        let state = self.state.clone();
        Some(Taken::Call(Box::pin(async move {
            let retry = Retry {
                request_state: request_state.as_deref(),
                responses,
            };
            let call = PlainCall::new(&state, &principal, tool, &arguments);
            let result = call.run(retry, capabilities).await;
            match result {
                Ok(answer) => call_answer(&id, answer),
                Err(error) => error_answer(id, error),
            }
        })))
    }

    /// Headers in the one form every client sends and rmcp certainly accepts: an allowed
    /// `Host`, no `Origin` (browsers' requests go the full way), JSON in, JSON and SSE
    /// accepted with no parameters, this revision, no `Mcp-Param-*`.
    fn plain_headers(&self, headers: &HeaderMap) -> bool {
        let host_allowed = single(headers, &HOST).is_some_and(|host| self.hosts.allows(host));
        host_allowed
            && !headers.contains_key(ORIGIN)
            && single(headers, &CONTENT_TYPE)
                .is_some_and(|t| t.eq_ignore_ascii_case("application/json"))
            && single(headers, &MCP_PROTOCOL_VERSION) == Some(MODERN_VERSION)
            && accepts_json_and_sse(headers)
            && !headers
                .keys()
                .any(|name| name.as_str().starts_with("mcp-param-"))
    }
}

/// The one value of header `name`, as text; `None` when absent, repeated or not visible ASCII.
fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// `Accept` lists `application/json` and `text/event-stream`, with no weights or parameters.
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    // The form the SDKs send, without splitting it.
    let mut values = headers.get_all(ACCEPT).iter();
    if let (Some(only), None) = (values.next(), values.next())
        && only.as_bytes() == b"application/json, text/event-stream"
    {
        return true;
    }
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for media in value.split(',') {
            let media = media.trim();
            if media.contains(';') {
                return false;
            }
            json |= media.eq_ignore_ascii_case("application/json");
            sse |= media.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// A JSON-RPC request, borrowed from the body. Strings with escapes fail to borrow, and unknown
/// or repeated members fail too: such requests are rmcp's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message<'a> {
    jsonrpc: &'a str,
    #[serde(borrow)]
    id: &'a RawValue,
    method: &'a str,
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

/// A request's params in one pass: `_meta` as written (see [`KnownMetas`]) and the members a
/// tool call may add, each as written, so that each is read with the type it had on rmcp's
/// path. Any other member sends the request to rmcp.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Params<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: &'a RawValue,
    #[serde(default, borrow)]
    name: Member<'a>,
    #[serde(default, borrow)]
    arguments: Member<'a>,
    #[serde(default, borrow)]
    request_state: Member<'a>,
    #[serde(default, borrow)]
    input_responses: Member<'a>,
}

impl Params<'_> {
    /// Only `_meta`, as `server/discover` and `tools/list` carry.
    fn is_meta_only(&self) -> bool {
        [
            &self.name,
            &self.arguments,
            &self.request_state,
            &self.input_responses,
        ]
        .iter()
        .all(|member| member.0.is_none())
    }
}

/// A member's JSON as written, `null` included; `None` when absent.
#[derive(Default)]
struct Member<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(deserializer).map(|raw| Member(Some(raw)))
    }
}

impl<'a> Member<'a> {
    /// The member read as `T`; absent is `T`'s `null`. `None` when it is not a `T`.
    fn read<T: Deserialize<'a>>(&self) -> Option<T> {
        serde_json::from_str(self.0.map_or("null", RawValue::get)).ok()
    }
}

/// A request id as rmcp reads and writes it: an `i64`, or a string without escapes.
enum Id {
    Number(i64),
    String(String),
}

fn request_id(raw: &RawValue) -> Option<Id> {
    let text = raw.get();
    if text.starts_with('"') {
        let s: &str = serde_json::from_str(text).ok()?;
        return Some(Id::String(s.to_owned()));
    }
    // Only the digits rmcp would write back: no `-0`, exponent or fraction.
    let n: i64 = text.parse().ok()?;
    (itoa::Buffer::new().format(n) == text).then_some(Id::Number(n))
}

/// The answer around a result serialized at start (discovery, the tool list): sized once, and
/// its outcome known without scanning it.
fn ready_answer(id: &Id, result: &RawValue) -> Response {
    let mut body = answer_start(id, result.get().len());
    body.extend_from_slice(result.get().as_bytes());
    body.push(b'}');
    // No outcome attached: a 200 without one counts as complete (see `edge::outcome`), and
    // attaching one allocates the response's extension map.
    json_response(StatusCode::OK, Bytes::from(body), None)
}

/// The answer of a plain tool call.
fn call_answer(id: &Id, answer: plain_call::CallAnswer) -> Response {
    let outcome = answer.outcome();
    let mut body = answer_start(id, 1024);
    if serde_json::to_writer(&mut body, &answer.into_wire()).is_err() {
        return super::answers::internal_error();
    }
    body.push(b'}');
    json_response(StatusCode::OK, Bytes::from(body), Some(outcome))
}

/// `{"jsonrpc":"2.0","id":…,"result":`, with room for a result of `result_len` bytes and the
/// closing brace.
fn answer_start(id: &Id, result_len: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(result_len + 64);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    match id {
        Id::Number(n) => body.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        Id::String(s) => {
            body.push(b'"');
            body.extend_from_slice(s.as_bytes());
            body.push(b'"');
        }
    }
    body.extend_from_slice(br#","result":"#);
    body
}

fn json_response(status: StatusCode, body: Bytes, outcome: Option<Outcome>) -> Response {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_LENGTH, length);
    if let Some(outcome) = outcome {
        response.extensions_mut().insert(outcome);
    }
    response
}

/// A tool call's JSON-RPC error, written by rmcp's type.
fn error_answer(id: Id, error: ErrorData) -> Response {
    let id = match id {
        Id::Number(n) => NumberOrString::Number(n),
        Id::String(s) => NumberOrString::String(s.into()),
    };
    let status = error_status(error.code);
    match serde_json::to_vec(&ServerJsonRpcMessage::error(error, Some(id))) {
        Ok(body) => json_response(status, Bytes::from(body), Some(Outcome::Error)),
        Err(_) => super::answers::internal_error(),
    }
}

/// rmcp's HTTP status for a modern-era JSON-RPC error (its `jsonrpc_http_status`), and 400 for
/// `-32602` as the edge sets it on rmcp's answers.
fn error_status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::INVALID_PARAMS => StatusCode::BAD_REQUEST,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

fn to_raw(result: &ServerResult) -> Box<RawValue> {
    let text = serde_json::to_string(result).expect("rmcp results serialize");
    RawValue::from_string(text).expect("serde_json writes JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_taken_only_in_the_form_rmcp_writes_back() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        assert!(matches!(request_id(&raw("7")), Some(Id::Number(7))));
        assert!(matches!(request_id(&raw("-3")), Some(Id::Number(-3))));
        assert!(matches!(request_id(&raw(r#""a-1""#)), Some(Id::String(s)) if s == "a-1"));
        for refused in [
            "-0",
            "1.0",
            "1e3",
            "18446744073709551615",
            r#""a\"b""#,
            "null",
            "{}",
        ] {
            assert!(request_id(&raw(refused)).is_none(), "{refused}");
        }
    }

    #[test]
    fn accept_must_list_both_types_plainly() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT, HeaderValue::from_str(v).unwrap());
            accepts_json_and_sse(&h)
        };
        assert!(with("application/json, text/event-stream"));
        assert!(with("TEXT/EVENT-STREAM,application/json"));
        assert!(!with("application/json"));
        assert!(!with("application/json;q=0, text/event-stream"));
        assert!(!with("*/*"));
    }
}
