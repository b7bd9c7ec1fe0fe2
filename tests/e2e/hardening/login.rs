//! The browser login of `oidc` identity is single use in the store, as sign-in flows are: a
//! copy of the login cookie replayed with the callback URL never redeems the code at the
//! issuer a second time.

use reqwest::StatusCode;

use crate::oidc::oidc_server;
use crate::support::mcp::url_and_form;
use crate::support::oidc::{access_token, provider, user};
use crate::support::{Browser, Mcp};

#[tokio::test]
async fn a_replayed_login_callback_with_a_copied_cookie_is_refused_before_the_issuer() {
    let server = oidc_server(&[]).await;
    let alice = user("alice");
    let token = access_token(&provider().issuer, &alice, &server.mcp_url(), "test-client").await;
    let (link, _, _) = Mcp::with_bearer(server.mcp_url(), token)
        .call_tool("list_invoices", serde_json::json!({}), url_and_form())
        .await
        .sign_in_round();

    // Through the issuer's login by hand, stopping at the redirect back to grantry.
    let browser = Browser::new();
    let first = browser.get(&link).await;
    assert_eq!(first.status, StatusCode::SEE_OTHER, "{}", first.body);
    let login_cookie = first
        .headers
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap())
        .find(|c| c.contains("grantry-login-"))
        .and_then(|c| c.split(';').next())
        .expect("the login transaction cookie")
        .to_owned();
    crate::support::leaks::record(
        "login cookie",
        login_cookie.split_once('=').map(|(_, value)| value),
    );
    let mut page = first;
    let callback = loop {
        let next = url::Url::parse(&page.url)
            .unwrap()
            .join(&page.location().expect("a redirect"))
            .unwrap()
            .to_string();
        if next.starts_with(&format!("{}/login/callback", server.base)) {
            break next;
        }
        page = browser.get(&next).await;
        if page.status == StatusCode::OK && page.url.contains("/interaction/") {
            page = browser.submit(&page.form().with("login", &alice)).await;
        }
    };
    let signed_in = browser.get(&callback).await;
    assert_eq!(
        signed_in.status,
        StatusCode::SEE_OTHER,
        "{}",
        signed_in.body
    );
    assert_eq!(
        signed_in.location().as_deref(),
        Some(&link[server.base.len()..])
    );

    // The copy of the cookie, replayed with the same callback URL.
    let replay = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(&callback)
        .header("cookie", &login_cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), StatusCode::BAD_REQUEST);
    assert!(
        replay
            .headers()
            .get("set-cookie")
            .is_none_or(|c| { !c.to_str().unwrap().contains("grantry-session") })
    );
    assert!(server.log_shows("login.replayed").await, "{}", server.log());
    assert!(
        !server.settled_log().await.contains("browser login failed"),
        "the code went to the issuer again"
    );
}
