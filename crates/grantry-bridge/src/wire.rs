//! JSON-RPC messages on the client's side: what a line of stdin is, and the answers written
//! to stdout.

use serde_json::{Map, Value, json};

/// One message the client sent.
#[derive(Debug)]
pub(super) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// The client's answer to a request of the bridge (`elicitation/create`).
    Response {
        id: Value,
        outcome: Outcome,
    },
}

/// A JSON-RPC answer: its `result`, or its `error` object.
pub(super) type Outcome = Result<Value, Value>;

/// Why a line is not a message (answered with -32700 or -32600, without an id).
#[derive(Debug, thiserror::Error)]
pub(super) enum WireError {
    #[error("parse error: {0}")]
    Parse(#[from] serde_json::Error),
    #[error("invalid request: not a JSON-RPC 2.0 request, notification or response")]
    Invalid,
}

impl WireError {
    pub(super) fn code(&self) -> i64 {
        match self {
            Self::Parse(_) => -32700,
            Self::Invalid => -32600,
        }
    }
}

pub(super) fn parse(line: &str) -> Result<Incoming, WireError> {
    let Value::Object(mut message) = serde_json::from_str(line)? else {
        return Err(WireError::Invalid);
    };
    if message.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(WireError::Invalid);
    }
    let params = message.remove("params").unwrap_or_else(|| json!({}));
    let id = message.remove("id");
    match (message.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (None, Some(id)) => Ok(Incoming::Response {
            id,
            outcome: response_outcome(message)?,
        }),
        _ => Err(WireError::Invalid),
    }
}

fn response_outcome(mut message: Map<String, Value>) -> Result<Outcome, WireError> {
    match (message.remove("result"), message.remove("error")) {
        (Some(result), None) => Ok(Ok(result)),
        (None, Some(error)) => Ok(Err(error)),
        _ => Err(WireError::Invalid),
    }
}

/// The answer to request `id`.
pub(super) fn answer(id: &Value, outcome: Outcome) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    }
}

/// A JSON-RPC error object.
pub(super) fn error(code: i64, message: impl Into<String>) -> Value {
    json!({"code": code, "message": message.into()})
}

pub(super) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A tool result that tells the user something went wrong, in words.
pub(super) fn tool_error(text: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": text.into()}], "isError": true})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart_by_their_members() {
        let request = parse(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).unwrap();
        assert!(matches!(request, Incoming::Request { ref method, .. } if method == "tools/list"));
        let note = parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(note, Incoming::Notification { .. }));
        let answer = parse(r#"{"jsonrpc":"2.0","id":"b1","result":{"action":"accept"}}"#).unwrap();
        assert!(matches!(answer, Incoming::Response { outcome: Ok(_), .. }));
        assert_eq!(parse("{").unwrap_err().code(), -32700);
        assert_eq!(
            parse(r#"{"id":1,"method":"x"}"#).unwrap_err().code(),
            -32600
        );
        assert_eq!(parse("[1]").unwrap_err().code(), -32600);
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#)
                .unwrap_err()
                .code(),
            -32600
        );
    }
}
