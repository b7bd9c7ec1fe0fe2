//! Refusals at the token endpoint and the API.

use super::*;

fn assert_oauth_error(reply: &Reply, status: StatusCode, error: &str) {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_eq!(reply.json()["error"], error, "{}", reply.body);
    assert_eq!(reply.header(CACHE_CONTROL), "no-store");
}

#[tokio::test]
async fn a_wrong_verifier_is_invalid_grant_and_does_not_burn_the_code() {
    let demo = provider(config());
    let code = approve(&demo, "demo-user").await;
    let wrong = "a".repeat(43);
    let reply = redeem(&demo, &code, &wrong).await;
    assert_oauth_error(&reply, StatusCode::BAD_REQUEST, "invalid_grant");
    // The rightful client, holding the real verifier, can still redeem it.
    let reply = redeem(&demo, &code, VERIFIER).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

#[tokio::test]
async fn a_code_redeemed_twice_is_invalid_grant() {
    let demo = provider(config());
    let code = approve(&demo, "demo-user").await;
    assert_eq!(redeem(&demo, &code, VERIFIER).await.status, StatusCode::OK);
    let reply = redeem(&demo, &code, VERIFIER).await;
    assert_oauth_error(&reply, StatusCode::BAD_REQUEST, "invalid_grant");
    assert!(
        reply.json()["error_description"]
            .as_str()
            .unwrap()
            .contains("already used")
    );
    assert_eq!(demo.stats().code_redemptions_ok, 1);
}

#[tokio::test]
async fn a_code_for_another_redirect_uri_or_a_forged_code_is_invalid_grant() {
    let demo = provider(DemoConfig {
        redirect_uris: vec![
            REDIRECT.to_owned(),
            "http://localhost:8080/oauth/callback".to_owned(),
        ],
        ..config()
    });
    let code = approve(&demo, "demo-user").await;
    let reply = post_form(
        &demo,
        "/token",
        Some((DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "http://localhost:8080/oauth/callback"),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_oauth_error(&reply, StatusCode::BAD_REQUEST, "invalid_grant");

    let reply = redeem(&demo, "g1.not-a-real-code", VERIFIER).await;
    assert_oauth_error(&reply, StatusCode::BAD_REQUEST, "invalid_grant");
}

#[tokio::test]
async fn bad_or_missing_client_authentication_is_401_invalid_client() {
    let demo = provider(config());
    let code = approve(&demo, "demo-user").await;
    let grant = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    let wrong_basic = post_form(&demo, "/token", Some((DEMO_CLIENT_ID, "nope")), &grant).await;
    assert_oauth_error(&wrong_basic, StatusCode::UNAUTHORIZED, "invalid_client");
    assert!(wrong_basic.header(WWW_AUTHENTICATE).starts_with("Basic"));

    let other_client =
        post_form(&demo, "/token", Some(("other", DEMO_CLIENT_SECRET)), &grant).await;
    assert_oauth_error(&other_client, StatusCode::UNAUTHORIZED, "invalid_client");

    let mut wrong_post = grant.to_vec();
    wrong_post.extend([("client_id", DEMO_CLIENT_ID), ("client_secret", "nope")]);
    let reply = post_form(&demo, "/token", None, &wrong_post).await;
    assert_oauth_error(&reply, StatusCode::UNAUTHORIZED, "invalid_client");

    let none = post_form(&demo, "/token", None, &grant).await;
    assert_oauth_error(&none, StatusCode::UNAUTHORIZED, "invalid_client");

    // None of that used the code up.
    assert_eq!(redeem(&demo, &code, VERIFIER).await.status, StatusCode::OK);
}

#[tokio::test]
async fn unknown_grant_types_and_missing_parameters_are_named() {
    let demo = provider(config());
    let basic = Some((DEMO_CLIENT_ID, DEMO_CLIENT_SECRET));
    let reply = post_form(&demo, "/token", basic, &[("grant_type", "password")]).await;
    assert_oauth_error(&reply, StatusCode::BAD_REQUEST, "unsupported_grant_type");

    let code = approve(&demo, "demo-user").await;
    let reply = post_form(
        &demo,
        "/token",
        basic,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
        ],
    )
    .await;
    assert_oauth_error(&reply, StatusCode::BAD_REQUEST, "invalid_request");
    assert_eq!(
        reply.json()["error_description"],
        "code_verifier is required"
    );

    let reply = post_form(&demo, "/token", basic, &[]).await;
    assert_oauth_error(&reply, StatusCode::BAD_REQUEST, "invalid_request");
}

#[tokio::test]
async fn a_bad_refresh_token_is_invalid_grant() {
    let demo = provider(config());
    let tokens = tokens_for(&demo, "demo-user").await;
    let basic = Some((DEMO_CLIENT_ID, DEMO_CLIENT_SECRET));
    // An access token is not a refresh token: purposes never cross.
    let access = tokens["access_token"].as_str().unwrap();
    for bad in [access, "g1.garbage"] {
        let reply = post_form(
            &demo,
            "/token",
            basic,
            &[("grant_type", "refresh_token"), ("refresh_token", bad)],
        )
        .await;
        assert_oauth_error(&reply, StatusCode::BAD_REQUEST, "invalid_grant");
    }
    assert_eq!(demo.stats().refreshes_ok, 0);
}

#[tokio::test]
async fn an_expired_access_token_is_401_invalid_token() {
    // Already expired beyond the sealer's 60 s clock leeway.
    let demo = provider(DemoConfig {
        access_token_ttl_secs: -120,
        ..config()
    });
    let tokens = tokens_for(&demo, "demo-user").await;
    let access = tokens["access_token"].as_str().unwrap();
    let reply = get(&demo, "/api/invoices", Some(access)).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        reply.header(WWW_AUTHENTICATE),
        r#"Bearer error="invalid_token""#
    );
    assert_eq!(reply.json()["error"], "invalid_token");
}

#[tokio::test]
async fn the_api_refuses_missing_or_forged_tokens_and_bad_status() {
    let demo = provider(config());
    let missing = get(&demo, "/api/invoices", None).await;
    assert_eq!(missing.status, StatusCode::UNAUTHORIZED);
    assert!(missing.header(WWW_AUTHENTICATE).starts_with("Bearer"));
    assert_eq!(missing.json()["error"], "invalid_token");

    let forged = get(&demo, "/api/invoices", Some("g1.forged")).await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        forged.header(WWW_AUTHENTICATE),
        r#"Bearer error="invalid_token""#
    );

    let tokens = tokens_for(&demo, "demo-user").await;
    // A refresh token is not an access token.
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let reply = get(&demo, "/api/invoices", Some(refresh)).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);

    let access = tokens["access_token"].as_str().unwrap();
    let reply = get(&demo, "/api/invoices?status=overdue", Some(access)).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"], "invalid_status");
    assert_eq!(demo.stats().api_requests, 4);
}

#[test]
fn consumed_codes_are_forgotten_only_after_they_expire() {
    use codes::Consumption::{First, Replayed};
    let mut consumed = codes::ConsumedCodes::default();
    let now = 1_800_000_000;
    assert_eq!(consumed.consume("a", now + 60, now), First);
    assert_eq!(consumed.consume("a", now + 60, now + 30), Replayed);
    // Still remembered while the sealer would accept the code (expiry plus leeway) ...
    assert_eq!(
        consumed.consume("a", now + 60, now + 60 + crate::seal::CLOCK_LEEWAY_SECS),
        Replayed
    );
    // ... and swept once it no longer could be.
    assert_eq!(consumed.consume("b", now + 1000, now + 10_000), First);
    assert_eq!(consumed.len(), 1);
}

#[test]
fn a_full_set_of_live_codes_refuses_more_rather_than_forgetting_one() {
    use codes::Consumption::{First, Full, Replayed};
    let mut consumed = codes::ConsumedCodes::default();
    let now = 1_800_000_000;
    for n in 0..codes::MAX_REMEMBERED_CODES {
        assert_eq!(consumed.consume(&format!("c{n}"), now + 60, now), First);
    }
    assert_eq!(consumed.consume("one-more", now + 60, now + 1), Full);
    assert_eq!(
        consumed.consume("c0", now + 60, now + 1),
        Replayed,
        "none forgotten"
    );
    // Once the codes have lapsed there is room again.
    assert_eq!(consumed.consume("later", now + 400, now + 300), First);
    assert_eq!(consumed.len(), 1);
}
