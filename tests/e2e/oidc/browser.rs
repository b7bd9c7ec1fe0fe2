//! The browser side of `oidc`: a login at the issuer and back, another user refused at the
//! connect page and at the callback, a forwarded authorize URL, the login callback's checks.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::oidc_server;
use crate::support::mcp::url_and_form;
use crate::support::oidc::{CLIENT_SECRET, access_token, provider, user};
use crate::support::{Browser, Mcp};

fn accept(key: &str) -> Value {
    json!({ key: {"action": "accept"} })
}

#[tokio::test]
async fn another_users_browser_is_refused_and_the_owner_still_finishes() {
    let server = oidc_server(&[]).await;
    let p = provider();
    let (alice, bob) = (user("alice"), user("bob"));
    let alice_token = access_token(&p.issuer, &alice, &server.mcp_url(), "test-client").await;
    let bob_token = access_token(&p.issuer, &bob, &server.mcp_url(), "test-client").await;
    let mcp = Mcp::with_bearer(server.mcp_url(), alice_token.clone());
    let (link, state, key) = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await
        .sign_in_round();

    // Bob opens Alice's link: grantry has him sign in at the issuer, then refuses him.
    let bobs = Browser::new();
    let refused = bobs.open_signing_in_as(&link, &bob).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(refused.body.contains("belongs to someone else"));
    assert!(server.log_shows("connect.identity_mismatch").await);
    assert_eq!(server.count_rows("flows").await, 0, "nothing was started");

    // Alice opens the same link: sign-in at the issuer, back to the same connect page.
    let alices = Browser::new();
    let page = alices.open_signing_in_as(&link, &alice).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(page.url, link, "the login returns to the very same page");
    assert!(
        page.body.contains(&alice),
        "the page says who is connecting"
    );
    let signed_in = alices.sign_in(&link, true).await;
    signed_in.assert_connected();
    let retry = mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
    assert_eq!(retry.result()["isError"], false);

    // Bob's own calls see none of Alice's connection.
    let bob_mcp = Mcp::with_bearer(server.mcp_url(), bob_token.clone());
    let _ = bob_mcp.first_round().await;

    // Alice's state replayed with Bob's token is refused.
    let replay = bob_mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    assert_eq!(replay.error_code(), -32602, "{}", replay.raw);
    // So is a form round of Alice's: her half-filled invoice is not Bob's to finish.
    let draft = json!({"email": "not-an-email", "customer_name": "Acme", "amount": 10,
        "currency": "EUR", "due_date": "2099-01-01"});
    let form = mcp
        .call_tool("create_invoice", draft.clone(), url_and_form())
        .await;
    let form_state = form.result()["requestState"].as_str().unwrap().to_owned();
    let answer =
        json!({"invoice_details": {"action": "accept", "content": {"email": "b@evil.example"}}});
    let stolen = bob_mcp
        .retry("create_invoice", draft, answer, &form_state)
        .await;
    assert_eq!(stolen.error_code(), -32602, "{}", stolen.raw);
    // And a confirmation Alice was asked for is not Bob's to give.
    let listed = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let open_id = listed.result()["structuredContent"]["invoices"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let void_args = json!({"invoice_id": open_id});
    let question = mcp
        .call_tool("void_invoice", void_args.clone(), url_and_form())
        .await;
    let confirm_state = question.result()["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let yes = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let forged = bob_mcp
        .retry("void_invoice", void_args, yes, &confirm_state)
        .await;
    assert_eq!(forged.error_code(), -32602, "{}", forged.raw);

    let log = server.settled_log().await;
    let mut secrets = alices.seen().secrets();
    secrets.extend(bobs.seen().secrets());
    secrets.extend([alice_token, bob_token, state, CLIENT_SECRET.to_owned()]);
    assert!(
        secrets.len() > 10,
        "the browsers saw codes, states and cookies"
    );
    for secret in &secrets {
        assert!(
            !log.contains(secret.as_str()),
            "a secret reached the log: {secret}"
        );
    }
    for event in ["login.succeeded", "connect.started", "grant.stored"] {
        assert!(log.contains(event), "audit event {event}");
    }
}

#[tokio::test]
async fn a_forwarded_provider_authorize_url_fails_before_any_token_request() {
    let server = oidc_server(&[]).await;
    let p = provider();
    let (alice, bob) = (user("alice"), user("bob"));
    let alice_token = access_token(&p.issuer, &alice, &server.mcp_url(), "test-client").await;
    let mcp = Mcp::with_bearer(server.mcp_url(), alice_token);
    let (link, state, key) = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await
        .sign_in_round();
    let alices = Browser::new();
    let page = alices.open_signing_in_as(&link, &alice).await;
    assert_eq!(page.status, StatusCode::OK);
    let sent = alices.submit(&page.form()).await;
    let authorize_url = sent.location().expect("Continue goes to the provider");

    // Bob, signed in to grantry as himself, follows Alice's authorize URL to the callback.
    let bobs = Browser::new();
    let _ = bobs.open_signing_in_as(&link, &bob).await;
    let tokens_before = server.demo_stats().await["token_requests"]
        .as_u64()
        .unwrap();
    let callback = bobs.decide_at_provider(&authorize_url, true).await;
    let landed = bobs.get(&callback).await;
    assert_eq!(landed.status, StatusCode::FORBIDDEN, "{}", landed.body);
    assert_eq!(
        server.demo_stats().await["token_requests"]
            .as_u64()
            .unwrap(),
        tokens_before,
        "no code was redeemed"
    );
    assert!(server.log_shows("callback.binding_mismatch").await);
    // The refused callback used the flow up: replaying it is refused and recorded.
    let replayed = bobs.get(&callback).await;
    assert_eq!(replayed.status, StatusCode::BAD_REQUEST);
    assert!(server.log_shows("callback.state_reused").await);
    let retry = mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    assert_eq!(
        retry.result()["resultType"],
        "input_required",
        "no grant for Alice"
    );

    // Alice starts again from her link and finishes.
    let done = alices.sign_in(&link, true).await;
    done.assert_connected();
}

/// The browser that pressed Continue brings the callback back, but signed in to grantry as
/// someone else by then (here: Alice's binding cookie beside Bob's session): refused as
/// `callback.identity_mismatch`, before any code is redeemed.
#[tokio::test]
async fn a_callback_from_the_starting_browser_now_signed_in_as_another_user_is_refused() {
    let server = oidc_server(&[]).await;
    let p = provider();
    let (alice, bob) = (user("alice"), user("bob"));
    let alice_token = access_token(&p.issuer, &alice, &server.mcp_url(), "test-client").await;
    let mcp = Mcp::with_bearer(server.mcp_url(), alice_token);
    let (link, state, key) = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await
        .sign_in_round();
    let alices = Browser::new();
    let page = alices.open_signing_in_as(&link, &alice).await;
    let authorize_url = alices.submit(&page.form()).await.location().unwrap();
    let callback = alices.decide_at_provider(&authorize_url, true).await;
    let bobs = Browser::new();
    let _ = bobs.open_signing_in_as(&link, &bob).await;

    let cookie = |browser: &Browser, prefix: &str| {
        browser
            .cookies(&server.base)
            .into_iter()
            .find(|(name, _)| name.starts_with(prefix))
            .map(|(name, value)| format!("{name}={value}"))
            .unwrap_or_else(|| panic!("no {prefix} cookie"))
    };
    let header = format!(
        "{}; {}",
        cookie(&alices, "grantry-bind"),
        cookie(&bobs, "grantry-session")
    );
    let tokens_before = server.demo_stats().await["token_requests"]
        .as_u64()
        .unwrap();
    let landed = reqwest::Client::new()
        .get(&callback)
        .header("cookie", header)
        .send()
        .await
        .unwrap();
    assert_eq!(landed.status(), StatusCode::FORBIDDEN);
    assert!(
        landed
            .text()
            .await
            .unwrap()
            .contains("This sign-in belongs to someone else")
    );
    assert_eq!(
        server.demo_stats().await["token_requests"]
            .as_u64()
            .unwrap(),
        tokens_before,
        "no code was redeemed"
    );
    assert!(server.log_shows("callback.identity_mismatch").await);
    let retry = mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    assert_eq!(retry.result()["resultType"], "input_required");
}

#[tokio::test]
async fn a_login_callback_without_its_cookie_or_state_signs_nobody_in() {
    let server = oidc_server(&[]).await;
    let alice = user("alice");
    let token = access_token(&provider().issuer, &alice, &server.mcp_url(), "test-client").await;
    let (link, _, _) = Mcp::with_bearer(server.mcp_url(), token)
        .first_round()
        .await;
    // The connect page sends a browser with no session to the issuer, with a login cookie.
    let browser = Browser::new();
    let to_login = browser.get(&link).await;
    assert_eq!(to_login.status, StatusCode::SEE_OTHER);
    let authorize = to_login.location().unwrap();
    assert!(authorize.starts_with(&format!("{}/auth?", provider().issuer)));
    let authorize_url = url::Url::parse(&authorize).unwrap();
    let query: std::collections::HashMap<_, _> = authorize_url.query_pairs().collect();
    assert_eq!(
        query["redirect_uri"],
        format!("{}/login/callback", server.base)
    );
    assert_eq!(query["code_challenge_method"], "S256");
    assert!(query.contains_key("nonce"));
    let cookie = to_login.header("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"),
        "{cookie}"
    );
    // Another browser brings the issuer's answer back: it lacks the login cookie.
    let came_back = browser.open_signing_in_as(&authorize, &alice).await;
    assert_eq!(
        came_back.status,
        StatusCode::OK,
        "the real browser is signed in"
    );
    let stranger = Browser::new();
    let callback = browser
        .seen()
        .urls
        .into_iter()
        .find(|u| u.contains("/login/callback?"))
        .unwrap();
    let page = stranger.get(&callback).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(
        page.header("set-cookie")
            .is_none_or(|c| !c.contains("grantry-session"))
    );
    let changed = stranger
        .get(&format!(
            "{}/login/callback?code=x&state=forged",
            server.base
        ))
        .await;
    assert_eq!(changed.status, StatusCode::BAD_REQUEST);
    // Still no session for the stranger: the link sends it to log in again.
    assert_eq!(stranger.get(&link).await.status, StatusCode::SEE_OTHER);
}
