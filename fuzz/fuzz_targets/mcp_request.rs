#![no_main]
//! JSON-RPC parsing and dispatch: any bytes as the body of `POST /mcp`, through the whole
//! app (edge, authentication, the modern era's reading, rmcp for the legacy one, the tools).
//! The headers follow the body's `method` and tool name when it has them, so well-formed
//! messages reach the handlers. Whatever comes in, the answer is never a 5xx; a JSON answer
//! is one JSON-RPC message whose HTTP status is the one the 2026-07-28 transport gives its
//! error code (a result: 200); a result says its `resultType`. A legacy session an
//! `initialize` opens is then ended by its opener.

use axum::body::Body;
use axum::http::{HeaderValue, Request, StatusCode};
use grantry_fuzz::{HOST, harness};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|body: &[u8]| {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let field = |pointer: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.pointer(pointer))
            .and_then(Value::as_str)
            .filter(|s| s.bytes().all(|b| b.is_ascii_graphic()))
            .map(str::to_owned)
    };
    let request = || {
        let mut request = Request::post("/mcp")
            .header("host", HOST)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28");
        if let Some(method) = field("/method") {
            request = request.header("mcp-method", method);
        }
        if let Some(name) = field("/params/name") {
            request = request.header("mcp-name", name);
        }
        request.body(Body::from(body.to_vec())).unwrap()
    };
    let (response, answer) = harness().send(request());
    assert!(
        !response.status().is_server_error(),
        "a request got {}: {}",
        response.status(),
        String::from_utf8_lossy(&answer)
    );
    let is_json = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json {
        let message: Value = serde_json::from_slice(&answer).expect("a JSON answer parses");
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        let legacy = response.headers().contains_key("mcp-session-id");
        if !legacy {
            assert_eq!(
                response.status().as_u16(),
                expected_status(&message),
                "{message}"
            );
        }
    }
    // A legacy session an `initialize` opened is ended, as a client would end it: its owner
    // may, and the run's memory stays flat.
    if let Some(id) = response.headers().get("mcp-session-id") {
        let (ended, _) = harness().send(end_session(id));
        assert_eq!(
            ended.status(),
            StatusCode::NO_CONTENT,
            "the opener ends its session"
        );
    }
});

fn end_session(id: &HeaderValue) -> Request<Body> {
    Request::delete("/mcp")
        .header("host", HOST)
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-11-25")
        .body(Body::empty())
        .unwrap()
}

/// The status the transport gives a message: 200 for a result (which says its type), 404
/// for an unknown method, 400 for a request that cannot be served as sent.
fn expected_status(message: &Value) -> u16 {
    if let Some(result) = message.get("result") {
        assert!(
            result["resultType"].is_string(),
            "a result without resultType: {message}"
        );
        return 200;
    }
    match message["error"]["code"].as_i64() {
        Some(-32601) => 404,
        Some(-32700 | -32600 | -32602 | -32020 | -32021 | -32022) => 400,
        Some(_) => 200,
        None => panic!("neither a result nor an error: {message}"),
    }
}
