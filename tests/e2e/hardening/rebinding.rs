//! DNS rebinding: a page on another site that rebinds its own name to grantry's address
//! reaches grantry with that name in `Host`. Every browser route answers 421 to it and
//! changes nothing; grantry's own names (and loopback ones, listening on loopback) are served.

use reqwest::StatusCode;

use crate::support::Server;

/// The status of `GET path` at `server` naming `host`.
async fn status_under(server: &Server, path: &str, host: &str) -> (StatusCode, String) {
    let answer = reqwest::Client::new()
        .get(format!("{}{path}", server.base))
        .header("host", host)
        .send()
        .await
        .unwrap();
    (answer.status(), answer.text().await.unwrap())
}

#[tokio::test]
async fn browser_routes_answer_only_to_grantrys_own_names() {
    let server = Server::start(&[]).await;
    let port = server.base.rsplit(':').next().unwrap().to_owned();
    let foreign = format!("rebound.attacker.example:{port}");
    let browser_routes = [
        "/",
        "/connections",
        "/connect/anything",
        "/connected",
        "/oauth/callback?code=c&state=s",
        "/login/callback?code=c&state=s",
        "/connections/conn_x/disconnect",
        "/assets/grantry.css",
        "/demo/authorize?client_id=x",
    ];
    for path in browser_routes {
        let (status, body) = status_under(&server, path, &foreign).await;
        assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{path}: {body}");
        assert!(body.contains("grantry's own address"), "{path}: {body}");
        let (status, _) = status_under(&server, path, &format!("localhost:{port}")).await;
        assert_ne!(
            status,
            StatusCode::MISDIRECTED_REQUEST,
            "{path} under localhost"
        );
    }
    // Probes and metrics are called by address; /mcp refuses the name itself.
    assert_eq!(
        status_under(&server, "/healthz", &foreign).await.0,
        StatusCode::OK
    );
    assert_eq!(
        status_under(&server, "/metrics", &foreign).await.0,
        StatusCode::OK
    );
    let mcp = reqwest::Client::new()
        .post(server.mcp_url())
        .header("host", &foreign)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), StatusCode::FORBIDDEN);
    assert!(server.log_shows("possible DNS rebinding").await);
}
