//! Malformed requests get JSON-RPC answers, not a plain-text 415 or a "method not found":
//! invalid params `-32602`, an unreadable request `-32600`, each with HTTP 400 and the id
//! where one can be read.

use serde_json::{Value, json};

use crate::support::mcp::meta;
use crate::support::{Mcp, Server};

/// Sends `body` as a `method` request (headers as a well-behaved client sets them); the
/// status, content type and message.
async fn send(mcp: &Mcp, method: &str, body: String) -> (u16, String, Value) {
    let headers = [
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", method.to_owned()),
        ("mcp-name", "list_invoices".to_owned()),
    ];
    let answer = mcp.raw(&headers, body).await;
    let content_type = answer
        .headers
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (answer.status.as_u16(), content_type, answer.body)
}

#[tokio::test]
async fn malformed_requests_get_their_json_rpc_error_with_http_400() {
    let meta = meta(json!({"elicitation": {"url": {}}}));
    let call = |params: Value| {
        let mut params = params;
        params["_meta"] = meta.clone();
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}).to_string()
    };
    let invalid_params = [
        call(json!({"name": "list_invoices", "arguments": {}, "requestState": 5})),
        call(json!({"name": "list_invoices", "arguments": {}, "requestState": {"a": 1}})),
        call(json!({"name": "list_invoices", "arguments": {}, "requestState": ["x"]})),
        call(json!({"name": "list_invoices", "arguments": "status=all"})),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[]}"#.to_owned(),
    ];
    let meta_text = meta.to_string();
    let invalid_requests = [
        format!(
            r#"{{"jsonrpc":"2.0","id":{{}},"method":"tools/list","params":{{"_meta":{meta_text}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","method":"tools/list","params":{{"_meta":{meta_text}}}}}"#
        ),
    ];
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    for body in &invalid_params {
        let method = if body.contains("tools/list") {
            "tools/list"
        } else {
            "tools/call"
        };
        let (status, content_type, message) = send(&mcp, method, body.clone()).await;
        assert_eq!(status, 400, "{body}: {message}");
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        assert_eq!(message["error"]["code"], -32602, "{body}: {message}");
        assert_eq!(message["id"], 3, "{body}: {message}");
    }
    for body in &invalid_requests {
        let (status, content_type, message) = send(&mcp, "tools/list", body.clone()).await;
        assert_eq!(status, 400, "{body}: {message}");
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        assert_eq!(message["error"]["code"], -32600, "{body}: {message}");
        let id = if body.contains(r#""id":{}"#) {
            Value::Null
        } else {
            json!(3)
        };
        assert_eq!(message["id"], id, "{body}: {message}");
    }
    // In this era the handshake is a removed method, whatever its params: "not found".
    let (status, _, message) = send(
        &mcp,
        "initialize",
        json!({"jsonrpc": "2.0", "id": 5, "method": "initialize",
               "params": {"_meta": meta, "protocolVersion": 7}})
        .to_string(),
    )
    .await;
    assert_eq!((status, &message["error"]["code"]), (404, &json!(-32601)));
    // A method grantry does not serve is still "not found".
    let (status, _, message) = send(
        &mcp,
        "prompts/list",
        json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/list",
               "params": {"_meta": meta}})
        .to_string(),
    )
    .await;
    assert_eq!((status, &message["error"]["code"]), (404, &json!(-32601)));
}

#[tokio::test]
async fn every_mcp_answer_says_no_store() {
    let server = Server::start(&["--rate-mcp-principal", "4"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let discover = mcp.request("server/discover", json!({}), json!({})).await;
    let sign_in = mcp
        .call_tool(
            "list_invoices",
            json!({}),
            crate::support::mcp::url_and_form(),
        )
        .await;
    let malformed = send(&mcp, "tools/list", "{not json".to_owned()).await;
    assert_eq!(malformed.0, 400);
    let mut answers = vec![discover, sign_in];
    let rate_limited = loop {
        let answer = mcp.request("tools/list", json!({}), json!({})).await;
        if answer.status == 429 {
            break answer;
        }
        answers.push(answer);
    };
    answers.push(rate_limited);
    for answer in &answers {
        assert_eq!(
            answer
                .headers
                .get("cache-control")
                .map(|v| v.to_str().unwrap()),
            Some("no-store"),
            "HTTP {}: {}",
            answer.status,
            answer.raw
        );
    }
}
