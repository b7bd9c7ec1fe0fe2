//! The tool registry as a client meets it: the provider argument mirrored into a header
//! (SEP-2243 `x-mcp-header`) and checked against the body, and the line between a call that
//! does not fit a tool's schema (a protocol error) and a value the model can correct (a tool
//! error).

use serde_json::{Value, json};

use crate::support::mcp::{header_value, meta, url_and_form};
use crate::support::{Mcp, Server};

async fn call_with_headers(mcp: &Mcp, arguments: Value, extra: &[(&str, String)]) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "list_invoices", "arguments": arguments, "_meta": meta(url_and_form())}});
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", "tools/call".to_owned()),
        ("mcp-name", "list_invoices".to_owned()),
    ];
    headers.extend(extra.iter().map(|(n, v)| (*n, v.clone())));
    let answer = mcp.raw(&headers, body.to_string()).await;
    (answer.status.as_u16(), answer.body)
}

#[tokio::test]
async fn every_tool_taking_a_provider_mirrors_it_into_a_header() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let listed = mcp.request("tools/list", json!({}), json!({})).await;
    let tools = listed.result()["tools"].as_array().unwrap().clone();
    let mirrored: Vec<&str> = tools
        .iter()
        .filter(|t| t["inputSchema"]["properties"]["provider"]["x-mcp-header"] == "Provider")
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        mirrored,
        [
            "list_invoices",
            "disconnect_account",
            "create_invoice",
            "void_invoice",
            "connect_account",
            "connection_status"
        ]
    );
}

#[tokio::test]
async fn a_provider_header_missing_or_unlike_the_body_is_refused_with_32020() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let args = json!({"provider": "demo"});
    let (status, missing) = call_with_headers(&mcp, args.clone(), &[]).await;
    assert_eq!(
        (status, &missing["error"]["code"]),
        (400, &json!(-32020)),
        "{missing}"
    );
    let (status, unlike) =
        call_with_headers(&mcp, args.clone(), &[("mcp-param-provider", "xero".into())]).await;
    assert_eq!(
        (status, &unlike["error"]["code"]),
        (400, &json!(-32020)),
        "{unlike}"
    );
    // Base64-wrapped, as a client writes a value that is not plain ASCII: taken.
    let wrapped = format!("=?base64?{}?=", "ZGVtbw==");
    let (status, taken) =
        call_with_headers(&mcp, args.clone(), &[("mcp-param-provider", wrapped)]).await;
    assert_eq!(status, 200, "{taken}");
    assert_eq!(taken["result"]["resultType"], "input_required", "{taken}");
}

#[tokio::test]
async fn a_value_that_fits_the_schema_but_not_the_deployment_is_a_tool_error() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    // A provider this deployment does not offer: the model can correct it.
    let header = [("mcp-param-provider", header_value("zoho"))];
    let (status, answer) = call_with_headers(&mcp, json!({"provider": "zoho"}), &header).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("`zoho` is not offered here; offered: demo"),
        "{text}"
    );
    // An argument the schema does not have, or of another type: the call does not fit.
    for arguments in [
        json!({"limit": 3}),
        json!({"status": 7}),
        json!({"status": "unpaid"}),
    ] {
        let (status, answer) = call_with_headers(&mcp, arguments.clone(), &[]).await;
        assert_eq!(
            (status, &answer["error"]["code"]),
            (400, &json!(-32602)),
            "{arguments}: {answer}"
        );
    }
}
