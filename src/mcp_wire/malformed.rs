//! Requests that are not what they say they are, and the JSON-RPC answers they get (HTTP 400
//! each) where rmcp would give a plain-text 415 or a `-32601`:
//!
//! - bytes that are not JSON: `-32700`;
//! - JSON that is not one request (an `id` that is an object, a member given twice, no
//!   `method`): `-32600`;
//! - a request whose `params` are not an object, or a method grantry serves whose params do
//!   not have the types its schema gives (a `requestState` that is a number, `arguments`
//!   that are a string): `-32602`.
//!
//! The id is echoed when it can be read (a string or a number), `null` otherwise.

use serde::Deserialize;
use serde_json::Value;

use crate::mcp_wire::jsonrpc::{ErrorCode, RpcError};

/// The methods grantry answers in the modern era: rmcp takes one of these with params of the
/// wrong types for an unknown method (`-32601`), which would tell the client the method does
/// not exist.
const MODERN_METHODS: [&str; 3] = ["server/discover", "tools/list", "tools/call"];
/// And in a legacy-era session, which has the handshake and `ping` too (2026-07-28 removed
/// them: there they are unknown methods).
const LEGACY_METHODS: [&str; 5] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
];

/// The `-32602` for a method grantry serves (in the request's era) whose params rmcp could
/// not read; `None` for a method it does not serve (that one is `-32601`).
pub(crate) fn invalid_params(method: &str, legacy: bool) -> Option<RpcError> {
    let served: &[&str] = if legacy {
        &LEGACY_METHODS
    } else {
        &MODERN_METHODS
    };
    served.contains(&method).then(|| {
        RpcError::invalid_params(format!(
            "Invalid params: {method}'s params do not have the types its schema gives"
        ))
    })
}

/// What a body rmcp could not read as a message is.
#[derive(Debug, PartialEq)]
pub(crate) struct Unreadable {
    pub(crate) code: ErrorCode,
    pub(crate) message: &'static str,
    /// The request's id, when it is one a response may carry.
    pub(crate) id: Value,
}

/// Reads a body rmcp refused as not a message; `None` when it is a well-formed request after
/// all (then rmcp's refusal was about something else, such as the content type).
pub(crate) fn classify(body: &[u8]) -> Option<Unreadable> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return Some(unreadable(
            ErrorCode::PARSE_ERROR,
            "Parse error",
            Value::Null,
        ));
    };
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    // A strict reading: each member once, the types JSON-RPC gives them.
    #[derive(Deserialize)]
    struct Envelope {
        jsonrpc: String,
        #[serde(default)]
        id: Option<Value>,
        #[serde(rename = "method")]
        _method: String,
        #[serde(default)]
        params: Option<Value>,
    }
    let Ok(envelope) = serde_json::from_slice::<Envelope>(body) else {
        return Some(unreadable(
            ErrorCode::INVALID_REQUEST,
            "Invalid Request",
            id,
        ));
    };
    let id_ok = matches!(
        envelope.id,
        None | Some(Value::String(_) | Value::Number(_) | Value::Null)
    );
    if envelope.jsonrpc != "2.0" || !id_ok {
        return Some(unreadable(
            ErrorCode::INVALID_REQUEST,
            "Invalid Request",
            id,
        ));
    }
    match envelope.params {
        Some(Value::Object(_)) | None => None,
        Some(_) => Some(unreadable(
            ErrorCode::INVALID_PARAMS,
            "Invalid params: params must be an object",
            id,
        )),
    }
}

fn unreadable(code: ErrorCode, message: &'static str, id: Value) -> Unreadable {
    Unreadable { code, message, id }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code_and_id(body: &str) -> Option<(i64, Value)> {
        classify(body.as_bytes()).map(|u| (i64::from(u.code.0), u.id))
    }

    #[test]
    fn each_shape_gets_its_json_rpc_answer_with_the_id_where_it_can_be_read() {
        assert_eq!(code_and_id("{not json"), Some((-32700, Value::Null)));
        assert_eq!(
            code_and_id(r#"{"jsonrpc":"2.0","id":{},"method":"tools/list","params":{}}"#),
            Some((-32600, Value::Null))
        );
        assert_eq!(
            code_and_id(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"ping"}"#),
            Some((-32600, json!(7)))
        );
        assert_eq!(
            code_and_id(r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":[]}"#),
            Some((-32602, json!("a")))
        );
        assert_eq!(
            code_and_id(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            Some((-32600, json!(1)))
        );
        assert_eq!(
            code_and_id(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#),
            None
        );
    }

    #[test]
    fn only_methods_grantry_serves_in_the_era_become_invalid_params() {
        for legacy in [false, true] {
            assert_eq!(
                invalid_params("tools/call", legacy).map(|e| e.code),
                Some(ErrorCode::INVALID_PARAMS)
            );
            assert!(invalid_params("prompts/list", legacy).is_none());
        }
        assert!(
            invalid_params("initialize", false).is_none(),
            "removed in 2026-07-28"
        );
        assert!(
            invalid_params("ping", false).is_none(),
            "removed in 2026-07-28"
        );
        assert!(invalid_params("ping", true).is_some());
    }
}
