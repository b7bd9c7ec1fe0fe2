#![no_main]
//! JSON-RPC parsing and dispatch: any bytes as the body of `POST /mcp`, through the whole
//! app (edge, authentication, rmcp, the tools). The headers follow the body's `method` and
//! tool name when it has them, so well-formed messages reach the handlers. Whatever comes in,
//! the answer is never a 5xx and a JSON answer is valid JSON; and the direct path answers as
//! rmcp does: the same request to an app with `--mcp-direct-path false` gets the same status,
//! content type and message (sealed values masked: each seal draws a fresh nonce). A legacy
//! session an `initialize` opens is then ended by its opener.

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
    let (rmcp_response, rmcp_answer) = harness().send_rmcp_only(request());
    assert_eq!(
        (response.status(), response.headers().get("content-type")),
        (
            rmcp_response.status(),
            rmcp_response.headers().get("content-type")
        ),
        "the direct path and rmcp answer differently: {} / {}",
        String::from_utf8_lossy(&answer),
        String::from_utf8_lossy(&rmcp_answer)
    );
    if let (Ok(direct), Ok(rmcp)) = (
        serde_json::from_slice::<Value>(&answer),
        serde_json::from_slice::<Value>(&rmcp_answer),
    ) {
        assert_eq!(
            masked(direct),
            masked(rmcp),
            "the direct path and rmcp answer differently"
        );
    }
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
        serde_json::from_slice::<Value>(&answer).expect("a JSON answer parses");
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
    if let Some(id) = rmcp_response.headers().get("mcp-session-id") {
        let (ended, _) = harness().send_rmcp_only(end_session(id));
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

/// Sealed values (`g1.` and a connect link's ticket) differ between any two answers.
fn masked(value: Value) -> Value {
    match value {
        Value::String(s) if s.starts_with("g1.") => Value::from("<sealed>"),
        Value::String(s) => match s.split_once("/connect/") {
            Some((before, _)) => Value::from(format!("{before}/connect/<ticket>")),
            None => Value::String(s),
        },
        Value::Array(items) => items.into_iter().map(masked).collect(),
        Value::Object(map) => map.into_iter().map(|(k, v)| (k, masked(v))).collect(),
        other => other,
    }
}
