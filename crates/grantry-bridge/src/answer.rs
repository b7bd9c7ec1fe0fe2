//! The server's answer to one request, as the client gets it: a JSON-RPC result or error
//! object, or why there is none. An HTTP error whose body is not JSON-RPC (a `403
//! insufficient_scope` with an OAuth error body) is named as such, never passed on as if it
//! were an answer: a client waits forever for an answer it cannot read.

use http::StatusCode;
use serde_json::{Value, json};

/// The server's JSON-RPC answer: its `result`, or its `error` object.
pub(super) type Reply = Result<Value, Value>;

/// Why a message from the server is not an answer to the request.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotAReply {
    #[error("the server answered HTTP {status} without a JSON-RPC answer{}", cause_text(.cause))]
    Status {
        status: StatusCode,
        /// The OAuth error code of its challenge or body (`insufficient_scope`), if any.
        cause: Option<String>,
    },
    #[error("the server's answer is not a JSON-RPC answer: {0}")]
    Garbled(String),
}

fn cause_text(cause: &Option<String>) -> String {
    cause
        .as_ref()
        .map(|cause| format!(" ({cause})"))
        .unwrap_or_default()
}

/// The answer `message` holds to request `id`, which came with HTTP `status`; `challenge`
/// is the error code its `WWW-Authenticate` named.
pub(super) fn reply_of(
    mut message: Value,
    id: u64,
    status: StatusCode,
    challenge: Option<&str>,
) -> Result<Reply, NotAReply> {
    let cause = challenge
        .or_else(|| message["error"].as_str())
        .and_then(code);
    let not_a_reply = |garbled: &str| {
        if status.is_success() {
            NotAReply::Garbled(garbled.to_owned())
        } else {
            NotAReply::Status { status, cause }
        }
    };
    let Some(fields) = message.as_object_mut() else {
        return Err(not_a_reply("not an object"));
    };
    let answers_id = fields.get("id") == Some(&json!(id));
    match (fields.remove("result"), fields.remove("error")) {
        (Some(result), None) if answers_id => Ok(Ok(result)),
        (Some(_), None) => Err(not_a_reply("an answer to another request")),
        // An error may come without the request's id (a parse error has none).
        (None, Some(error)) if is_error_object(&error) => Ok(Err(error)),
        (None, Some(_)) => Err(not_a_reply("an error that is not a JSON-RPC error object")),
        _ => Err(not_a_reply("neither result nor error")),
    }
}

/// A JSON-RPC error object: an integer `code` and a string `message`.
fn is_error_object(error: &Value) -> bool {
    error["code"].is_i64() && error["message"].is_string()
}

/// An OAuth error code fit to show: short, visible ASCII.
fn code(text: &str) -> Option<String> {
    let fit = !text.is_empty() && text.len() <= 64 && text.bytes().all(|b| b.is_ascii_graphic());
    fit.then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_json_rpc_result_or_error_object_is_an_answer() {
        let ok = StatusCode::OK;
        let result = json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": []}});
        assert_eq!(
            reply_of(result, 3, ok, None).unwrap(),
            Ok(json!({"tools": []}))
        );
        let error =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "no"}});
        let bad_request = StatusCode::BAD_REQUEST;
        assert!(reply_of(error, 3, bad_request, None).unwrap().is_err());
        let other = json!({"jsonrpc": "2.0", "id": 4, "result": {}});
        assert!(matches!(
            reply_of(other, 3, ok, None),
            Err(NotAReply::Garbled(_))
        ));
        let oauth = json!({"error": "insufficient_scope", "error_description": "needs write"});
        let refused = reply_of(oauth.clone(), 3, StatusCode::FORBIDDEN, None).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the server answered HTTP 403 Forbidden without a JSON-RPC answer (insufficient_scope)"
        );
        let named = reply_of(oauth, 3, StatusCode::FORBIDDEN, Some("invalid_token"));
        assert!(named.unwrap_err().to_string().ends_with("(invalid_token)"));
        let odd = json!({"error": "x".repeat(65)});
        let unnamed = reply_of(odd, 3, StatusCode::BAD_GATEWAY, None).unwrap_err();
        assert!(unnamed.to_string().ends_with("without a JSON-RPC answer"));
    }
}
