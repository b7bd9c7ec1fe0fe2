//! JSON-RPC 2.0 as `/mcp` writes it: request ids, error codes by name, errors, and the HTTP
//! answer around a message (the status the 2026-07-28 spec gives each error code).

use axum::body::{Body, Bytes};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::metrics::Outcome;
use crate::tools::ToolError;

/// A request id, as grantry echoes it: an integer, or a string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum RequestId {
    Number(i64),
    String(String),
}

impl RequestId {
    /// A request's id: a string, or an integer in the `i64` range. A number written with a
    /// fraction or an exponent counts when its value is a whole number below 2^53 (it is
    /// echoed as that integer); anything else is no id a request may carry.
    pub(crate) fn read(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::String(s.clone())),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Some(Self::Number(i)),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                    Some(Self::Number(f as i64))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whom an answer is for: a request's id, `null` for a request whose id could not be read,
/// or nobody (the `id` member left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReplyTo {
    Id(RequestId),
    Unknown,
    Nobody,
}

/// A JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct ErrorCode(pub i32);

impl ErrorCode {
    /// The body is not JSON.
    pub(crate) const PARSE_ERROR: Self = Self(-32700);
    /// The JSON is not one request.
    pub(crate) const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist (in this era).
    pub(crate) const METHOD_NOT_FOUND: Self = Self(-32601);
    /// The params, or a `requestState`, do not hold.
    pub(crate) const INVALID_PARAMS: Self = Self(-32602);
    /// Something on grantry's side failed; `data.retryable` says whether to try again.
    pub(crate) const INTERNAL_ERROR: Self = Self(-32603);
    /// A routing header is missing or disagrees with the body (2026-07-28).
    pub(crate) const HEADER_MISMATCH: Self = Self(-32020);
    /// The client did not declare a capability the call needs (2026-07-28).
    pub(crate) const MISSING_CAPABILITY: Self = Self(-32021);
    /// A protocol version grantry does not speak; `data.supported` names those it does.
    pub(crate) const UNSUPPORTED_VERSION: Self = Self(-32022);
    /// The legacy era's "open this URL first" (2025-11-25).
    pub(crate) const URL_ELICITATION_REQUIRED: Self = Self(-32042);

    /// The HTTP status of an answer carrying this error, as the 2026-07-28 transport gives it:
    /// 404 for an unknown method, 400 for a request that cannot be served as sent, 200 for
    /// the rest (the request was understood; the error is the answer).
    pub(crate) fn status(self) -> StatusCode {
        match self {
            Self::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            Self::PARSE_ERROR
            | Self::INVALID_REQUEST
            | Self::INVALID_PARAMS
            | Self::HEADER_MISMATCH
            | Self::MISSING_CAPABILITY
            | Self::UNSUPPORTED_VERSION => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        }
    }
}

/// A JSON-RPC error: its code, its message, and what else the client may act on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    #[must_use]
    pub(crate) fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32602`: the params do not hold.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603`: something on grantry's side failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// The one answer for any `requestState` that does not hold up.
    pub fn invalid_request_state() -> Self {
        Self::invalid_params("Invalid or expired requestState")
            .with_data(serde_json::json!({"reason": "invalid_request_state"}))
    }

    /// `-32021`: the call needs a capability the client did not declare (`required`, as
    /// `data.requiredCapabilities` names it).
    pub fn missing_capability(message: impl Into<String>, required: Value) -> Self {
        Self::new(ErrorCode::MISSING_CAPABILITY, message)
            .with_data(serde_json::json!({"requiredCapabilities": required}))
    }

    /// `-32021` for `what` (a method, a tool) from a client that did not declare the
    /// extension `extension`.
    pub(crate) fn extension_required(what: impl std::fmt::Display, extension: &str) -> Self {
        Self::missing_capability(
            format!("{what} needs the client to declare the {extension} extension"),
            serde_json::json!({"extensions": {extension: {}}}),
        )
    }
}

/// A tool call that cannot be served as asked: `-32602` for the caller's mistakes, `-32603`
/// (retryable) when the store is down, `-32603` (not retryable) when this replica cannot open
/// what the store holds.
impl From<ToolError> for RpcError {
    fn from(error: ToolError) -> Self {
        match error {
            ToolError::UnknownTool(name) => Self::invalid_params(format!("Unknown tool: {name}")),
            ToolError::InvalidArguments(message) => {
                Self::invalid_params(format!("Invalid arguments: {message}"))
            }
            ToolError::Store(e @ crate::store::StoreError::Unopenable { .. }) => {
                crate::metrics::store_error("unopenable");
                tracing::error!(error = %e, "a stored value does not open on this replica");
                Self::internal(
                    "grantry cannot open what it stored for this account on this replica: its \
                     replicas' sealing keys differ. An operator must give every replica the \
                     same GRANTRY_KEYS; retrying does not help",
                )
                .with_data(serde_json::json!({"retryable": false}))
            }
            ToolError::Store(e) => {
                crate::metrics::store_error("mcp");
                tracing::error!(error = %e, "store unavailable during a tool call");
                Self::internal("grantry's store is unavailable; retry in a moment")
                    .with_data(serde_json::json!({"retryable": true}))
            }
        }
    }
}

/// A response message to `to`: `{"jsonrpc":"2.0","id":…,"result"|"error":…}`, the body
/// written by `write`.
fn message(
    to: &ReplyTo,
    member: &str,
    size: usize,
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<Bytes> {
    // The body's size and the envelope around it: written without growing the buffer.
    let mut bytes = Vec::with_capacity(size + 64);
    bytes.extend_from_slice(br#"{"jsonrpc":"2.0""#);
    match to {
        ReplyTo::Id(id) => {
            bytes.extend_from_slice(br#","id":"#);
            serde_json::to_writer(&mut bytes, id)?;
        }
        ReplyTo::Unknown => bytes.extend_from_slice(br#","id":null"#),
        ReplyTo::Nobody => {}
    }
    bytes.extend_from_slice(b",\"");
    bytes.extend_from_slice(member.as_bytes());
    bytes.extend_from_slice(b"\":");
    write(&mut bytes)?;
    bytes.push(b'}');
    Ok(Bytes::from(bytes))
}

/// The bytes of a result message.
pub(crate) fn result_bytes<T: Serialize>(to: &ReplyTo, result: &T) -> Option<Bytes> {
    message(to, "result", 1024, |bytes| {
        serde_json::to_writer(bytes, result)
    })
    .ok()
}

/// The answer around a result serialized already (discovery, the tool list).
pub(crate) fn ready_response(to: &ReplyTo, result: &RawValue) -> Response {
    let text = result.get();
    let written = message(to, "result", text.len(), |bytes| {
        bytes.extend_from_slice(text.as_bytes());
        Ok(())
    });
    match written {
        Ok(bytes) => json_response(StatusCode::OK, bytes, Outcome::Complete),
        Err(_) => internal_error(),
    }
}

/// The bytes of an error message.
pub(crate) fn error_bytes(to: &ReplyTo, error: &RpcError) -> Bytes {
    // An error of grantry's own always serializes (its `data` is JSON already).
    message(to, "error", 256, |bytes| {
        serde_json::to_writer(bytes, error)
    })
    .unwrap_or_else(|_| Bytes::from_static(INTERNAL_ERROR_BODY))
}

const INTERNAL_ERROR_BODY: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#;

/// The HTTP answer carrying a result, counted as `outcome`.
pub(crate) fn result_response<T: Serialize>(
    to: &ReplyTo,
    result: &T,
    outcome: Outcome,
) -> Response {
    match result_bytes(to, result) {
        Some(bytes) => json_response(StatusCode::OK, bytes, outcome),
        None => internal_error(),
    }
}

/// The HTTP answer carrying `error`, with its code's status.
pub(crate) fn error_response(to: &ReplyTo, error: &RpcError) -> Response {
    json_response(error.code.status(), error_bytes(to, error), Outcome::Error)
}

/// A JSON-RPC error written before any message could be read (no id), with `status`.
pub(crate) fn refusal(status: StatusCode, code: ErrorCode, message: &str) -> Response {
    let error = RpcError::new(code, message);
    json_response(
        status,
        error_bytes(&ReplyTo::Unknown, &error),
        Outcome::Error,
    )
}

/// The answer when grantry itself failed to write one.
pub(crate) fn internal_error() -> Response {
    json_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        Bytes::from_static(INTERNAL_ERROR_BODY),
        Outcome::Failed,
    )
}

/// A JSON body, sized, with the outcome the request metrics count (a 200 without one counts
/// as complete: attaching it would allocate the response's extension map for nothing).
pub(crate) fn json_response(status: StatusCode, body: Bytes, outcome: Outcome) -> Response {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_LENGTH, length);
    if !(status == StatusCode::OK && outcome == Outcome::Complete) {
        response.extensions_mut().insert(outcome);
    }
    response
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_are_strings_or_whole_numbers() {
        assert_eq!(RequestId::read(&json!(7)), Some(RequestId::Number(7)));
        assert_eq!(RequestId::read(&json!(-3)), Some(RequestId::Number(-3)));
        assert_eq!(RequestId::read(&json!(-0.0)), Some(RequestId::Number(0)));
        assert_eq!(RequestId::read(&json!(1e2)), Some(RequestId::Number(100)));
        assert_eq!(
            RequestId::read(&json!("a\"b")),
            Some(RequestId::String("a\"b".into()))
        );
        for refused in [
            json!(1.5),
            json!(18_446_744_073_709_551_615_u64),
            json!(null),
            json!(true),
            json!({}),
            json!([1]),
        ] {
            assert_eq!(RequestId::read(&refused), None, "{refused}");
        }
    }

    #[test]
    fn messages_carry_the_id_null_or_none_as_asked() {
        let error = RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request");
        let text =
            |to: ReplyTo| -> Value { serde_json::from_slice(&error_bytes(&to, &error)).unwrap() };
        assert_eq!(
            text(ReplyTo::Id(RequestId::Number(3))),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32600, "message": "Invalid Request"}})
        );
        assert_eq!(text(ReplyTo::Unknown)["id"], Value::Null);
        assert!(text(ReplyTo::Nobody).get("id").is_none());
        let result = result_bytes(
            &ReplyTo::Id(RequestId::String("x".into())),
            &json!({"a": 1}),
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&result.unwrap()).unwrap(),
            json!({"jsonrpc": "2.0", "id": "x", "result": {"a": 1}})
        );
    }

    #[test]
    fn each_code_has_the_transports_status() {
        assert_eq!(ErrorCode::METHOD_NOT_FOUND.status(), StatusCode::NOT_FOUND);
        for bad in [-32700, -32600, -32602, -32020, -32021, -32022] {
            assert_eq!(ErrorCode(bad).status(), StatusCode::BAD_REQUEST, "{bad}");
        }
        assert_eq!(ErrorCode::INTERNAL_ERROR.status(), StatusCode::OK);
    }
}
