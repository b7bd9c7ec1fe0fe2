//! The OAuth callback under attack and failure: each bad callback gets a clear page, makes no
//! token request and stores nothing.

use reqwest::StatusCode;

use crate::support::{Browser, Mcp, Server};

async fn token_requests(server: &Server) -> u64 {
    server.demo_stats().await["token_requests"]
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn a_replayed_callback_never_redeems_the_code_again() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let browser = Browser::new();
    let (link, _, _) = mcp.first_round().await;
    let done = browser.sign_in(&link, true).await;
    let tokens = token_requests(&server).await;
    assert_eq!(tokens, 1);
    let again = browser.get(&done.callback_url).await;
    assert_eq!(again.status, StatusCode::OK);
    assert!(again.body.contains("Already connected"), "{}", again.body);
    assert_eq!(
        token_requests(&server).await,
        tokens,
        "no second token request"
    );
    assert_eq!(server.count_rows("grants").await, 1);
}

#[tokio::test]
async fn concurrent_duplicate_callbacks_redeem_once() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let browser = std::sync::Arc::new(Browser::new());
    let (link, _, _) = mcp.first_round().await;
    let authorize = browser.continue_at(&link).await;
    let callback = browser.decide_at_provider(&authorize, true).await;
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (browser, callback) = (browser.clone(), callback.clone());
        tasks.push(tokio::spawn(
            async move { browser.get(&callback).await.status },
        ));
    }
    let mut redirected = 0;
    for t in tasks {
        if t.await.unwrap() == StatusCode::SEE_OTHER {
            redirected += 1;
        }
    }
    assert_eq!(redirected, 1, "exactly one callback completes the sign-in");
    assert_eq!(token_requests(&server).await, 1);
    assert_eq!(server.count_rows("grants").await, 1);
}

#[tokio::test]
async fn an_authorize_url_forwarded_to_another_browser_fails_before_any_token_request() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    // The attacker passes the connect page, then hands the authorize URL to a victim.
    let attacker = Browser::new();
    let authorize = attacker.continue_at(&link).await;
    let victim = Browser::new();
    let callback = victim.decide_at_provider(&authorize, true).await;
    let page = victim.get(&callback).await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    assert!(page.body.contains("another browser"), "{}", page.body);
    assert_eq!(token_requests(&server).await, 0);
    assert_eq!(server.count_rows("grants").await, 0);
    assert!(server.log_shows("callback.binding_mismatch").await);
    // The flow is spent; the attacker cannot finish it either.
    let page = attacker.get(&callback).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert_eq!(token_requests(&server).await, 0);
}

#[tokio::test]
async fn unknown_missing_repeated_and_expired_states_are_refused() {
    let server = Server::start(&[]).await;
    let browser = Browser::new();
    for query in [
        "",
        "?code=abc",
        "?code=abc&state=unknown",
        "?code=abc&state=a&state=b",
    ] {
        let page = browser
            .get(&format!("{}/oauth/callback{query}", server.base))
            .await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{query}");
        assert!(page.body.contains("not valid"), "{query}: {}", page.body);
    }

    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    let authorize = browser.continue_at(&link).await;
    let callback = browser.decide_at_provider(&authorize, true).await;
    server.execute("UPDATE flows SET expires_at = 0").await;
    let page = browser.get(&callback).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.body.contains("expired"), "{}", page.body);
    assert_eq!(token_requests(&server).await, 0);
    assert_eq!(server.count_rows("grants").await, 0);
}

#[tokio::test]
async fn a_denied_sign_in_ends_the_held_retry_with_not_connected() {
    let server = Server::start(&["--retry-hold", "30"]).await;
    let mcp = std::sync::Arc::new(Mcp::new(server.mcp_url()));
    let (link, state, key) = mcp.first_round().await;
    let retry = mcp.held_retry(key, state);
    let browser = Browser::new();
    let done = browser.sign_in(&link, false).await;
    assert!(done.callback_url.contains("error=access_denied"));
    assert_eq!(done.final_page.status, StatusCode::OK);
    assert!(
        done.final_page.body.contains("not connected")
            || done.final_page.body.contains("nothing was connected")
    );
    let answer = retry.await.unwrap();
    let r = answer.result();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["isError"], true);
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("declined")
    );
    assert_eq!(token_requests(&server).await, 0);
    assert_eq!(server.count_rows("grants").await, 0);
}

#[tokio::test]
async fn an_issuer_mismatch_is_refused_before_the_token_request() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(
        &catalog,
        "[providers.demo]\nissuer = \"http://127.0.0.1:1/some-other-issuer\"\n",
    )
    .unwrap();
    let server = Server::start(&["--providers", catalog.to_str().unwrap()]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    let done = Browser::new().sign_in(&link, true).await;
    assert_eq!(done.final_page.status, StatusCode::BAD_REQUEST);
    assert_eq!(token_requests(&server).await, 0);
    assert_eq!(server.count_rows("grants").await, 0);
    assert!(server.log_shows("callback.iss_mismatch").await);
}
