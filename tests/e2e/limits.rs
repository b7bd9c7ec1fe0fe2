//! Rate limits and the pending sign-in cap, as a client and a browser meet them.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{Browser, Mcp, Server, servers, with_room_in_the_window};

async fn tools_list(server: &Server) -> (StatusCode, Option<String>) {
    let answer = Mcp::new(server.mcp_url())
        .request("tools/list", json!({}), json!({}))
        .await;
    let retry_after = answer
        .headers
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (answer.status, retry_after)
}

fn assert_retry_after(value: Option<String>) {
    let secs: u64 = value.expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&secs), "{secs}");
}

#[tokio::test]
async fn mcp_requests_past_the_principals_limit_get_429_with_retry_after() {
    let server = Server::start(&["--rate-mcp-principal", "3"]).await;
    with_room_in_the_window(10).await;
    for _ in 0..3 {
        assert_eq!(tools_list(&server).await.0, StatusCode::OK);
    }
    let (status, retry_after) = tools_list(&server).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_retry_after(retry_after);
}

#[tokio::test]
async fn browser_routes_past_the_address_limit_get_a_429_page() {
    let server = Server::start(&["--rate-browser-ip", "2"]).await;
    let browser = Browser::new();
    let link = format!("{}/connect/v1.not-a-ticket", server.base);
    with_room_in_the_window(10).await;
    for _ in 0..2 {
        assert_eq!(browser.get(&link).await.status, StatusCode::BAD_REQUEST);
    }
    let page = browser.get(&link).await;
    assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS);
    assert_retry_after(page.header("retry-after").map(str::to_owned));
    assert!(page.body.contains("Too many requests"));
}

/// Two replicas on one store, each serving two of a principal's four allowed requests: the
/// fifth is refused on both, whichever receives it. Each replica adds its counts to the store
/// every `FLUSH_EVERY` (250 ms), so the requests are spaced by more than two of those.
async fn replicas_share_the_limit(store: &[&str]) {
    let key = grantry::seal::generate_key();
    let mut args = store.to_vec();
    args.extend(["--keys", &key, "--rate-mcp-principal", "4"]);
    let a = Server::start(&args).await;
    let b = Server::start_beside(&a, &args).await;
    with_room_in_the_window(15).await;
    let flushed = grantry::limits::FLUSH_EVERY * 3;
    for server in [&a, &a, &b, &b] {
        assert_eq!(tools_list(server).await.0, StatusCode::OK);
        tokio::time::sleep(flushed).await;
    }
    assert_eq!(
        tools_list(&a).await.0,
        StatusCode::TOO_MANY_REQUESTS,
        "A counts B's requests; A:\n{}\nB:\n{}",
        a.log(),
        b.log()
    );
    assert_eq!(
        tools_list(&b).await.0,
        StatusCode::TOO_MANY_REQUESTS,
        "B counts A's requests"
    );
}

#[tokio::test]
async fn replicas_on_one_postgres_share_the_limit() {
    let Some((store, _database)) = servers::postgres_store().await else {
        return;
    };
    replicas_share_the_limit(&servers::as_strs(&store)).await;
}

#[tokio::test]
async fn replicas_on_one_redis_share_the_limit() {
    let Some((store, _prefix)) = servers::redis_store().await else {
        return;
    };
    replicas_share_the_limit(&servers::as_strs(&store)).await;
}

#[tokio::test]
async fn starting_more_sign_ins_than_the_cap_supersedes_the_oldest() {
    let server = Server::start(&["--max-pending-flows", "2"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    let browser = Browser::new();
    let mut authorize_urls = Vec::new();
    for _ in 0..3 {
        authorize_urls.push(browser.continue_at(&link).await);
    }
    assert!(server.log_shows("connect.superseded").await);
    let tokens_before = server.demo_stats().await["token_requests"]
        .as_u64()
        .unwrap();
    let oldest_callback = browser.decide_at_provider(&authorize_urls[0], true).await;
    let page = browser.get(&oldest_callback).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(
        page.body.contains("A newer sign-in replaced this one"),
        "{}",
        page.body
    );
    assert_eq!(
        server.demo_stats().await["token_requests"]
            .as_u64()
            .unwrap(),
        tokens_before,
        "a superseded sign-in redeems nothing"
    );
    let newest_callback = browser.decide_at_provider(&authorize_urls[2], true).await;
    let page = browser.get(&newest_callback).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
}
