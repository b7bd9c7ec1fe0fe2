//! What `/mcp` answers with, for every part of it: rmcp values built from their wire JSON,
//! a tool's result as a `complete` answer, the JSON-RPC errors grantry gives (with their codes
//! named), and the bodies of errors written before rmcp is reached.

use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use rmcp::model::{CallToolResponse, ErrorCode, ErrorData};
use serde_json::{Value, json};

use crate::tools::{ToolError, ToolResult};

/// JSON-RPC error codes, by name.
pub(super) mod codes {
    use rmcp::model::ErrorCode;

    /// The body is not JSON.
    pub(crate) const PARSE_ERROR: ErrorCode = ErrorCode::PARSE_ERROR;
    /// The JSON is not one request.
    pub(crate) const INVALID_REQUEST: ErrorCode = ErrorCode::INVALID_REQUEST;
    /// The method does not exist (in this era).
    pub(crate) const METHOD_NOT_FOUND: ErrorCode = ErrorCode::METHOD_NOT_FOUND;
    /// The params, or a `requestState`, do not hold.
    pub(crate) const INVALID_PARAMS: ErrorCode = ErrorCode::INVALID_PARAMS;
    /// Something on grantry's side failed; `data.retryable` says whether to try again.
    pub(crate) const INTERNAL_ERROR: ErrorCode = ErrorCode::INTERNAL_ERROR;
    /// The client did not declare a capability the call needs (2026-07-28).
    pub(crate) const MISSING_CAPABILITY: ErrorCode = ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY;
    /// A protocol version grantry does not speak; `data.supported` names those it does.
    pub(crate) const UNSUPPORTED_VERSION: ErrorCode = ErrorCode::UNSUPPORTED_PROTOCOL_VERSION;
    /// The legacy era's "open this URL first" (2025-11-25).
    pub(crate) const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
}

/// Builds an rmcp value from its wire JSON. The JSON is grantry's own and always well formed.
pub(super) fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> T {
    let value = strip_nulls(value);
    serde_json::from_value(value).expect("grantry builds well-formed MCP values")
}

/// Drops absent optional fields of the envelope (rmcp wants them missing, not null); a tool's
/// own output is kept exactly as the tool wrote it, nulls included.
pub(super) fn strip_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| match k.as_str() {
                    "structuredContent" => (k, v),
                    _ => (k, strip_nulls(v)),
                })
                .collect(),
        ),
        other => other,
    }
}

/// A tool's result as the wire's `complete` result (`resultType`, `content`, `isError`, and
/// `structuredContent` when the tool gave one).
pub(super) fn complete_json(result: ToolResult) -> Value {
    let mut body = json!({
        "resultType": "complete",
        "content": [{"type": "text", "text": result.text}],
        "isError": result.is_error,
    });
    if let Some(structured) = result.structured {
        body["structuredContent"] = structured;
    }
    body
}

/// A tool's result as rmcp's `complete` answer.
pub(super) fn complete(result: ToolResult) -> CallToolResponse {
    CallToolResponse::Complete(from_json(complete_json(result)))
}

/// The one answer for any `requestState` that does not hold up.
pub(super) fn invalid_request_state() -> ErrorData {
    ErrorData::new(
        codes::INVALID_PARAMS,
        "Invalid or expired requestState",
        Some(json!({"reason": "invalid_request_state"})),
    )
}

pub(super) fn tool_error(error: ToolError) -> ErrorData {
    match error {
        ToolError::UnknownTool(name) => {
            ErrorData::new(codes::INVALID_PARAMS, format!("Unknown tool: {name}"), None)
        }
        ToolError::InvalidArguments(message) => ErrorData::new(
            codes::INVALID_PARAMS,
            format!("Invalid arguments: {message}"),
            None,
        ),
        ToolError::Store(e) => {
            crate::metrics::store_error("mcp");
            tracing::error!(error = %e, "store unavailable during a tool call");
            ErrorData::new(
                codes::INTERNAL_ERROR,
                "grantry's store is unavailable; retry in a moment",
                Some(json!({"retryable": true})),
            )
        }
    }
}

/// A JSON-RPC error body written by grantry itself (before or around rmcp), with `id` when
/// it could be read.
pub(super) fn jsonrpc_error(
    status: StatusCode,
    code: ErrorCode,
    message: &str,
    id: Value,
) -> Response {
    json_answer(
        status,
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code.0, "message": message},
        }),
    )
}

pub(super) fn json_answer(status: StatusCode, body: Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(super) fn internal_error() -> Response {
    jsonrpc_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        codes::INTERNAL_ERROR,
        "Internal error",
        Value::Null,
    )
}
