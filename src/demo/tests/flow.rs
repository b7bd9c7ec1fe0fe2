//! The happy paths: discovery, the full code flow, refresh, the API's filters and users.

use super::*;

#[tokio::test]
async fn metadata_names_every_endpoint_under_the_issuer() {
    let demo = provider(config());
    let reply = get(&demo, "/.well-known/oauth-authorization-server", None).await;
    assert_eq!(reply.status, StatusCode::OK);
    let meta = reply.json();
    assert_eq!(meta["issuer"], ISSUER);
    assert_eq!(
        meta["authorization_endpoint"],
        format!("{ISSUER}/authorize")
    );
    assert_eq!(meta["token_endpoint"], format!("{ISSUER}/token"));
    assert_eq!(meta["revocation_endpoint"], format!("{ISSUER}/revoke"));
    assert_eq!(
        meta["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    assert_eq!(meta["authorization_response_iss_parameter_supported"], true);
    assert_eq!(
        meta["scopes_supported"],
        serde_json::json!(["invoices:read", "invoices:write"])
    );
    assert_eq!(meta, demo.metadata());
}

#[tokio::test]
#[expect(clippy::too_many_lines, reason = "one flow, read top to bottom")]
async fn full_code_flow_from_consent_page_to_invoices() {
    let demo = provider(config());

    // The browser opens the authorize URL and sees a consent page.
    let page = get(&demo, &authorize_path(&authorize_params()), None).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_html_security_headers(&page);
    assert!(
        page.header(CONTENT_SECURITY_POLICY)
            .contains("http://127.0.0.1:8080")
    );
    assert!(page.body.contains("grantry-demo"));
    assert!(page.body.contains("invoices:read"));
    assert!(page.body.contains(r#"name="user" value="demo-user""#));
    assert!(
        page.body
            .contains(&format!(r#"name="state" value="{STATE}""#))
    );
    assert!(page.body.contains(">Approve<") && page.body.contains(">Deny<"));
    assert!(
        !page.body.contains("<script"),
        "the consent page runs no JavaScript"
    );

    // Approve: 303 back to the callback with code, state and iss.
    let mut form = authorize_params();
    form.extend([("user", "demo-user"), ("decision", "approve")]);
    let reply = post_form(&demo, "/authorize", None, &form).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(reply.header(CACHE_CONTROL), "no-store");
    let (location, pairs) = reply.location_params();
    assert!(location.as_str().starts_with(&format!("{REDIRECT}?")));
    assert_eq!(param(&pairs, "state"), Some(STATE));
    assert_eq!(param(&pairs, "iss"), Some(ISSUER));
    let code = param(&pairs, "code").expect("a code");

    // grantry's client redeems it with the verifier.
    let reply = redeem(&demo, code, VERIFIER).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.header(CACHE_CONTROL), "no-store");
    let tokens = reply.json();
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    assert_eq!(tokens["scope"], "invoices:read");
    let access = tokens["access_token"].as_str().unwrap();
    assert!(!tokens["refresh_token"].as_str().unwrap().is_empty());

    // And calls the API with the access token.
    let reply = get(&demo, "/api/invoices?status=all", Some(access)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let invoices = reply.json()["invoices"].as_array().unwrap().clone();
    assert_eq!(invoices.len(), 5);
    let first = &invoices[0];
    assert!(first["id"].as_str().unwrap().starts_with("in_"));
    assert!(first["number"].as_str().unwrap().starts_with("DEMO-"));
    assert!(["eur", "usd", "gbp"].contains(&first["currency"].as_str().unwrap()));
    assert!(first["total_cents"].is_u64());
    assert!(first["customer_name"].is_string() && first["due"].is_string());

    assert_eq!(
        demo.stats(),
        DemoStats {
            authorize_requests: 1,
            codes_issued: 1,
            token_requests: 1,
            code_redemptions_ok: 1,
            refreshes_ok: 0,
            api_requests: 1,
            invoices_created: 0,
            invoices_kept: 0,
            users_kept: 0,
            codes_remembered: 1,
        }
    );
}

#[tokio::test]
async fn status_filter_splits_open_and_paid() {
    let demo = provider(config());
    let tokens = tokens_for(&demo, "demo-user").await;
    let access = tokens["access_token"].as_str().unwrap();
    let count = |reply: Reply, state: &str| {
        let invoices = reply.json()["invoices"].as_array().unwrap().clone();
        assert!(invoices.iter().all(|i| i["state"] == state), "{invoices:?}");
        invoices.len()
    };
    let open = count(
        get(&demo, "/api/invoices?status=open", Some(access)).await,
        "open",
    );
    let paid = count(
        get(&demo, "/api/invoices?status=paid", Some(access)).await,
        "paid",
    );
    assert!(open >= 1 && paid >= 1);
    assert_eq!(open + paid, 5);
    let all = get(&demo, "/api/invoices", Some(access)).await;
    assert_eq!(
        all.json()["invoices"].as_array().unwrap().len(),
        5,
        "no status means all"
    );
}

#[tokio::test]
async fn each_user_has_their_own_invoices() {
    let demo = provider(config());
    let list = |tokens: Value| {
        let demo = demo.clone();
        async move {
            let access = tokens["access_token"].as_str().unwrap().to_owned();
            get(&demo, "/api/invoices", Some(&access)).await.json()["invoices"].clone()
        }
    };
    let alice = list(tokens_for(&demo, "alice").await).await;
    let alice_again = list(tokens_for(&demo, "alice").await).await;
    let bob = list(tokens_for(&demo, "bob@example.com").await).await;
    assert_eq!(alice, alice_again, "the same user sees the same invoices");
    assert_ne!(alice, bob, "another user sees other invoices");
}

#[tokio::test]
async fn refresh_gives_a_new_working_access_token_and_the_same_refresh_token() {
    let demo = provider(config());
    let tokens = tokens_for(&demo, "demo-user").await;
    let refresh_token = tokens["refresh_token"].as_str().unwrap();
    let reply = post_form(
        &demo,
        "/token",
        Some((DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)),
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.header(CACHE_CONTROL), "no-store");
    let refreshed = reply.json();
    assert_ne!(refreshed["access_token"], tokens["access_token"]);
    assert_eq!(
        refreshed["refresh_token"], tokens["refresh_token"],
        "no rotation"
    );
    assert_eq!(refreshed["scope"], "invoices:read");
    let access = refreshed["access_token"].as_str().unwrap();
    assert_eq!(
        get(&demo, "/api/invoices", Some(access)).await.status,
        StatusCode::OK
    );
    assert_eq!(demo.stats().refreshes_ok, 1);
}

#[tokio::test]
async fn client_secret_post_works_like_basic() {
    let demo = provider(config());
    let code = approve(&demo, "demo-user").await;
    let reply = post_form(
        &demo,
        "/token",
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", DEMO_CLIENT_ID),
            ("client_secret", DEMO_CLIENT_SECRET),
        ],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

#[tokio::test]
async fn basic_credentials_are_form_urlencoded_per_rfc_6749() {
    let secret = "s3cr:t +x/%";
    let demo = provider(DemoConfig {
        client_secret: secret.to_owned(),
        ..config()
    });
    let code = approve(&demo, "demo-user").await;
    let reply = post_form(
        &demo,
        "/token",
        Some((DEMO_CLIENT_ID, secret)),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

#[tokio::test]
async fn auto_approve_skips_the_consent_page() {
    let demo = provider(DemoConfig {
        auto_approve: true,
        ..config()
    });
    let reply = get(&demo, &authorize_path(&authorize_params()), None).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    let (_, pairs) = reply.location_params();
    assert_eq!(param(&pairs, "state"), Some(STATE));
    assert_eq!(param(&pairs, "iss"), Some(ISSUER));
    let code = param(&pairs, "code").unwrap();
    let reply = redeem(&demo, code, VERIFIER).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

#[tokio::test]
async fn revocation_is_acknowledged() {
    let demo = provider(config());
    let tokens = tokens_for(&demo, "demo-user").await;
    let reply = post_form(
        &demo,
        "/revoke",
        Some((DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)),
        &[("token", tokens["refresh_token"].as_str().unwrap())],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    let reply = post_form(
        &demo,
        "/revoke",
        Some((DEMO_CLIENT_ID, "wrong")),
        &[("token", "x")],
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
}
