//! The MCP wire, request by request: what a 2026-07-28 client sends and must get back.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::mcp::{VERSION, meta, url_and_form};
use crate::support::{Mcp, Server};

fn body(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string()
}

fn headers(method: &str) -> Vec<(&'static str, String)> {
    vec![
        ("mcp-protocol-version", VERSION.to_owned()),
        ("mcp-method", method.to_owned()),
    ]
}

#[tokio::test]
async fn discover_and_tools_list_carry_cache_hints_and_server_info() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let discover = mcp.request("server/discover", json!({}), json!({})).await;
    assert_eq!(discover.status, StatusCode::OK);
    let r = discover.result();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["supportedVersions"], json!([VERSION, "2025-11-25"]));
    assert!(r["capabilities"]["tools"].is_object());
    assert!(r["ttlMs"].as_u64().is_some());
    assert!(r["cacheScope"].is_string());
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "grantry"
    );

    let list = mcp.request("tools/list", json!({}), json!({})).await;
    let r = list.result();
    assert_eq!(r["resultType"], "complete");
    assert!(r["ttlMs"].as_u64().is_some() && r["cacheScope"].is_string());
    let tool = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "list_invoices")
        .expect("list_invoices is listed");
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    assert_eq!(tool["annotations"]["openWorldHint"], true);
    assert_eq!(
        tool["inputSchema"]["properties"]["status"]["enum"],
        json!(["open", "paid", "all"])
    );
    assert_eq!(
        tool["inputSchema"]["properties"]["status"]["default"],
        "open"
    );
    assert!(tool["outputSchema"]["properties"]["invoices"].is_object());
}

#[tokio::test]
async fn protocol_errors_get_the_spec_codes_and_statuses() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let good_meta = json!({"_meta": meta(json!({}))});

    // Unparseable JSON.
    let a = mcp.raw(&headers("tools/list"), "{not json".into()).await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32700)
    );

    // Mcp-Method disagrees with the body, or is missing.
    let a = mcp
        .raw(
            &headers("server/discover"),
            body("tools/list", good_meta.clone()),
        )
        .await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32020)
    );
    let a = mcp
        .raw(
            &[("mcp-protocol-version", VERSION.into())],
            body("tools/list", good_meta.clone()),
        )
        .await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32020)
    );

    // Mcp-Name naming a harmless tool while the body calls list_invoices never runs it.
    let mut h = headers("tools/call");
    h.push(("mcp-name", "harmless".into()));
    let call = json!({"name": "list_invoices", "arguments": {}, "_meta": meta(url_and_form())});
    let a = mcp.raw(&h, body("tools/call", call)).await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32020)
    );

    // Header version differs from _meta's.
    let mut h = headers("tools/list");
    h[0].1 = "2025-11-25".into();
    let a = mcp.raw(&h, body("tools/list", good_meta.clone())).await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32020)
    );

    // A version grantry does not speak, in both places.
    let mut old_meta = meta(json!({}));
    old_meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let mut h = headers("tools/list");
    h[0].1 = "1900-01-01".into();
    let a = mcp
        .raw(&h, body("tools/list", json!({"_meta": old_meta})))
        .await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32022)
    );
    assert_eq!(
        a.body["error"]["data"]["supported"],
        json!([VERSION, "2025-11-25"])
    );

    // _meta without its required keys.
    let a = mcp
        .raw(
            &headers("tools/list"),
            body(
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}),
            ),
        )
        .await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32602)
    );

    // Unknown method.
    let a = mcp
        .raw(
            &headers("nope/nothing"),
            body("nope/nothing", good_meta.clone()),
        )
        .await;
    assert_eq!((a.status, a.error_code()), (StatusCode::NOT_FOUND, -32601));

    // Unknown tool, and invalid arguments.
    let a = mcp
        .call_tool("no_such_tool", json!({}), url_and_form())
        .await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32602)
    );
    let a = mcp
        .call_tool("list_invoices", json!({"status": "unpaid"}), url_and_form())
        .await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, -32602)
    );

    // A batch is not one message.
    let batch = format!("[{}]", body("tools/list", good_meta.clone()));
    let a = mcp.raw(&headers("tools/list"), batch).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn oversized_bodies_foreign_origins_and_stray_gets_are_refused() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    // One byte over the limit: the server reads the whole body before refusing it, so the
    // client sees the 413 rather than a connection closed under its feet.
    // The limit docs/security.md gives.
    let limit = 256 * 1024;
    let start = body("tools/list", json!({"_meta": meta(json!({})), "pad": ""}));
    let pad = "x".repeat(limit + 1 - start.len());
    let big = start.replacen("\"pad\":\"\"", &format!("\"pad\":\"{pad}\""), 1);
    assert_eq!(big.len(), limit + 1);
    let a = mcp.raw(&headers("tools/list"), big).await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE);

    let mut h = headers("tools/list");
    h.push(("origin", "http://evil.example".into()));
    let a = mcp
        .raw(&h, body("tools/list", json!({"_meta": meta(json!({}))})))
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);

    // GET opens a legacy session's stream, and nothing else.
    let get = reqwest::get(server.mcp_url()).await.unwrap();
    assert_eq!(get.status(), StatusCode::NOT_ACCEPTABLE);
    let get_sse = |session: Option<&str>| {
        let mut request = reqwest::Client::new()
            .get(server.mcp_url())
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(id) = session {
            request = request.header("mcp-session-id", id);
        }
        request.send()
    };
    let no_session = get_sse(None).await.unwrap();
    assert_eq!(no_session.status(), StatusCode::BAD_REQUEST);
    let unknown = get_sse(Some("no-such-session")).await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn without_url_elicitation_the_spec_mode_gets_32021_and_nothing_is_written() {
    let server = Server::start(&["--no-url-elicitation", "spec"]).await;
    let mcp = Mcp::new(server.mcp_url());
    for caps in [
        json!({}),
        json!({"elicitation": {}}),
        json!({"elicitation": {"form": {}}}),
    ] {
        let a = mcp
            .call_tool("list_invoices", json!({}), caps.clone())
            .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "caps {caps}");
        assert_eq!(a.error_code(), -32021);
        let message = a.body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("grantry bridge") && message.contains("--no-url-elicitation link"),
            "the message names what would work: {message}"
        );
        assert_eq!(
            a.body["error"]["data"]["requiredCapabilities"],
            json!({"elicitation": {"url": {}}})
        );
    }
    assert_eq!(server.count_rows("flows").await, 0);
    assert_eq!(server.count_rows("grants").await, 0);
}

#[tokio::test]
async fn the_first_round_is_one_url_elicitation_without_an_id_and_writes_nothing() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let a = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    assert_eq!(a.status, StatusCode::OK);
    let r = a.result();
    assert_eq!(r["resultType"], "input_required");
    let requests = r["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (_, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let params = request["params"].as_object().unwrap();
    assert_eq!(params["mode"], "url");
    assert!(
        !params.contains_key("elicitationId"),
        "2026-07-28 has no elicitationId"
    );
    let url = params["url"].as_str().unwrap();
    let prefix = format!("{}/connect/", server.base);
    assert!(url.starts_with(&prefix), "{url}");
    let ticket = &url[prefix.len()..];
    assert!(ticket.len() > 40, "the ticket is a sealed value");
    assert!(!ticket.contains("local-user") && !url.contains('?'));
    let state = r["requestState"].as_str().unwrap();
    assert!(!state.contains("local-user") && !state.contains("list_invoices"));
    assert!(!r.as_object().unwrap().contains_key("ttlMs"));
    assert_eq!(
        server.count_rows("flows").await,
        0,
        "the round writes nothing"
    );
    assert_eq!(server.count_rows("grants").await, 0);
}

/// A `requestState` past its expiry gets the one refusal every bad state gets (-32602, HTTP
/// 400); the log says it expired. The same claims sealed now are taken.
#[tokio::test]
async fn an_expired_request_state_gets_the_one_refusal() {
    use grantry::seal::Purpose;
    let key = grantry::seal::generate_key();
    let server = Server::start(&["--keys", &key]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (_, issued, input_key) = mcp.first_round().await;
    // The key holder seals the very claims grantry sealed, once long ago and once now.
    let ring = grantry::seal::KeyRing::from_encoded(&[key]).unwrap();
    let sealer = grantry::seal::Sealer::new(ring, server.mcp_url());
    let now = grantry_base::clock::unix_now();
    let claims: serde_json::Value = sealer
        .open_timed(Purpose::RequestState, b"", &issued, now)
        .unwrap();
    let decline = json!({ input_key: {"action": "decline"} });

    let expired = sealer.seal_timed(Purpose::RequestState, b"", &claims, now - 3600, 600);
    let refused = mcp
        .retry("list_invoices", json!({}), decline.clone(), &expired)
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(refused.error_code(), -32602, "{}", refused.raw);
    assert_eq!(
        refused.body["error"]["message"],
        "Invalid or expired requestState"
    );
    assert!(server.log_shows("sealed value expired").await);

    let fresh = sealer.seal_timed(Purpose::RequestState, b"", &claims, now, 600);
    let taken = mcp.retry("list_invoices", json!({}), decline, &fresh).await;
    assert_eq!(taken.result()["resultType"], "complete", "{}", taken.raw);
}

/// grantry serves `grantry bridge`'s Client ID Metadata Document: its id is its own URL under
/// the public URL, its redirect the bridge's loopback listener, and it holds no secret.
#[tokio::test]
async fn the_bridges_client_metadata_document_is_served_under_the_public_url() {
    // (dev identity takes only a loopback public URL; another port than grantry's own.)
    let server = Server::start(&["--public-url", "http://localhost:9443"]).await;
    let response = reqwest::get(format!("{}/bridge/client-metadata.json", server.base))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let document: Value = response.json().await.unwrap();
    assert_eq!(
        document["client_id"],
        "http://localhost:9443/bridge/client-metadata.json"
    );
    assert_eq!(
        document["redirect_uris"],
        json!(["http://127.0.0.1/callback"])
    );
    assert_eq!(document["token_endpoint_auth_method"], "none");
    assert!(document.get("client_secret").is_none());
}
