//! The connect page: what it shows, the headers it carries, and the Continue POST's defences.

use crate::support::{Browser, Mcp, Server};
use reqwest::StatusCode;

async fn connect_link(server: &Server) -> String {
    Mcp::new(server.mcp_url()).first_round().await.0
}

#[tokio::test]
async fn the_page_says_who_connects_what_and_is_hardened() {
    let server = Server::start(&[]).await;
    let link = connect_link(&server).await;
    let page = Browser::new().get(&link).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("local-user"), "who");
    assert!(page.body.contains("Demo Billing"), "which provider");
    assert!(page.body.contains("invoices:read"), "which scopes");
    assert!(!page.body.contains("<script"), "no JavaScript");
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert!(
        page.header("set-cookie").is_none(),
        "GET has no side effects"
    );
    assert_eq!(server.count_rows("flows").await, 0);
}

#[tokio::test]
async fn continue_sets_the_binding_cookie_and_redirects_with_pkce() {
    let server = Server::start(&[]).await;
    let link = connect_link(&server).await;
    let browser = Browser::new();
    let page = browser.get(&link).await;
    let sent = browser.submit(&page.form()).await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER);
    let location = url::Url::parse(&sent.location().unwrap()).unwrap();
    assert_eq!(location.path(), "/demo/authorize");
    let q: std::collections::HashMap<_, _> = location.query_pairs().into_owned().collect();
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["code_challenge"].len(), 43);
    assert_eq!(q["redirect_uri"], format!("{}/oauth/callback", server.base));
    assert!(q["state"].len() >= 22, "state carries at least 128 bits");
    let cookie = sent.header("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/")
    );
    assert!(cookie.contains("Max-Age=600"));
    let value = cookie.split(';').next().unwrap().split('=').nth(1).unwrap();
    assert_eq!(server.count_rows("flows").await, 1);
    assert!(
        !server.settled_log().await.contains(value),
        "the cookie value is never logged"
    );
}

#[tokio::test]
async fn bad_links_and_forged_posts_change_nothing() {
    let server = Server::start(&[]).await;
    let browser = Browser::new();
    for ticket in ["nothing", "g1.AAAA", &"g1.".repeat(2000)] {
        let page = browser
            .get(&format!("{}/connect/{ticket}", server.base))
            .await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST);
        assert!(page.body.contains("not valid"));
    }
    let link = connect_link(&server).await;
    let form = browser.get(&link).await.form();
    let forged = form.clone().with("csrf", "g1.forged");
    assert_eq!(browser.submit(&forged).await.status, StatusCode::FORBIDDEN);
    let cross_site = browser
        .submit_with(&form, &[("sec-fetch-site", "cross-site")])
        .await;
    assert_eq!(cross_site.status, StatusCode::FORBIDDEN);
    let other_origin = browser
        .submit_with(&form, &[("origin", "http://evil.example")])
        .await;
    assert_eq!(other_origin.status, StatusCode::FORBIDDEN);
    assert_eq!(server.count_rows("flows").await, 0);
}

#[tokio::test]
async fn a_real_browser_post_with_origin_null_continues() {
    // Under `Referrer-Policy: no-referrer` browsers send `Origin: null` on the form's POST.
    let server = Server::start(&[]).await;
    let link = connect_link(&server).await;
    let browser = Browser::new();
    let form = browser.get(&link).await.form();
    let sent = browser
        .submit_with(
            &form,
            &[("origin", "null"), ("sec-fetch-site", "same-origin")],
        )
        .await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER, "{}", sent.body);
    assert_eq!(server.count_rows("flows").await, 1);
}
