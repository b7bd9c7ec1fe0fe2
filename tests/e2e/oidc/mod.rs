//! `oidc` identity against a real OpenID Connect provider (oidc-provider, tests/oidc): grantry
//! as a resource server, the browser login, and proof that only the caller can finish a
//! sign-in.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::mcp::url_and_form;
use crate::support::oidc::{self, CLIENT_SECRET, access_token, provider, user};
use crate::support::{Browser, Mcp, Server};

async fn oidc_server(extra: &[&str]) -> Server {
    let mut args = oidc::grantry_args(&provider().issuer);
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start(&args).await
}

fn accept(key: &str) -> Value {
    json!({ key: {"action": "accept"} })
}

/// A tools/list with `token` (or none): the HTTP status and the WWW-Authenticate header.
async fn list_with(server: &Server, token: Option<String>) -> (StatusCode, String) {
    let mut mcp = Mcp::new(server.mcp_url());
    mcp.bearer = token;
    let answer = mcp.request("tools/list", json!({}), json!({})).await;
    let challenge = answer
        .headers
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (answer.status, challenge)
}

#[tokio::test]
async fn metadata_names_the_issuer_and_a_missing_token_gets_the_challenge() {
    let server = oidc_server(&["--oidc-scopes", "invoices"]).await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let metadata: Value = reqwest::get(format!("{}{path}", server.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(metadata["resource"], server.mcp_url(), "{path}");
        assert_eq!(
            metadata["authorization_servers"],
            json!([provider().issuer])
        );
        assert_eq!(metadata["scopes_supported"], json!(["invoices"]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }
    let (status, challenge) = list_with(&server, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"invoices\"",
            server.base
        )
    );
    let alice = user("alice");
    let token = access_token(&provider().issuer, &alice, &server.mcp_url(), "test-client").await;
    let (status, _) = list_with(&server, Some(token)).await;
    assert_eq!(status, StatusCode::OK);
}

/// A JWT signed by a key grantry has never seen, with otherwise perfect claims.
fn forged_token(issuer: &str, audience: &str, kid: &str, alg: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("key.pem");
    let der = dir.path().join("key.der");
    let made = std::process::Command::new("openssl")
        .args(["genrsa", "-out"])
        .arg(&pem)
        .arg("2048")
        .output()
        .unwrap();
    assert!(made.status.success());
    // PKCS#1 DER, the form jsonwebtoken reads without its PEM feature.
    let converted = std::process::Command::new("openssl")
        .args(["rsa", "-traditional", "-outform", "DER", "-in"])
        .arg(&pem)
        .arg("-out")
        .arg(&der)
        .output()
        .unwrap();
    assert!(converted.status.success());
    let now = std::time::UNIX_EPOCH.elapsed().unwrap().as_secs();
    let claims = json!({"iss": issuer, "aud": audience, "sub": "mallory", "scope": "invoices",
        "iat": now, "exp": now + 600});
    let mut header = jsonwebtoken::Header::new(alg.parse().unwrap());
    header.kid = Some(kid.to_owned());
    header.typ = Some("at+jwt".into());
    let key = match alg {
        "HS256" => jsonwebtoken::EncodingKey::from_secret(b"the public key, as a secret").unwrap(),
        _ => jsonwebtoken::EncodingKey::from_rsa_der(&std::fs::read(&der).unwrap()),
    };
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

/// An `alg: none` JWT with otherwise perfect claims.
fn unsigned_token(issuer: &str, audience: &str, kid: &str) -> String {
    use base64::Engine as _;
    let encode = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let now = std::time::UNIX_EPOCH.elapsed().unwrap().as_secs();
    let header = json!({"alg": "none", "typ": "at+jwt", "kid": kid});
    let claims =
        json!({"iss": issuer, "aud": audience, "sub": "mallory", "iat": now, "exp": now + 600});
    format!("{}.{}.", encode(header), encode(claims))
}

fn kid_of(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

#[tokio::test]
async fn tokens_not_minted_by_the_issuer_for_grantry_get_401_invalid_token() {
    let server = oidc_server(&[]).await;
    let p = provider();
    let alice = user("alice");
    let good = access_token(&p.issuer, &alice, &server.mcp_url(), "test-client").await;
    let cases = [
        (
            "another audience",
            access_token(
                &p.issuer,
                &alice,
                "http://127.0.0.1:9/other/mcp",
                "test-client",
            )
            .await,
        ),
        (
            "another issuer, same signing key",
            access_token(&p.other_issuer, &alice, &server.mcp_url(), "test-client").await,
        ),
        (
            "an unknown key",
            forged_token(&p.issuer, &server.mcp_url(), "attacker-key", "RS256"),
        ),
        (
            "the issuer's kid but another key",
            forged_token(&p.issuer, &server.mcp_url(), &kid_of(&good), "RS256"),
        ),
        (
            "HS256 with the issuer's kid",
            forged_token(&p.issuer, &server.mcp_url(), &kid_of(&good), "HS256"),
        ),
        ("not a token", "abc.def.ghi".to_owned()),
        (
            "alg none",
            unsigned_token(&p.issuer, &server.mcp_url(), &kid_of(&good)),
        ),
        (
            "an ID token",
            oidc::token_response(
                &p.issuer,
                &alice,
                &server.mcp_url(),
                "test-client",
                "openid",
            )
            .await["id_token"]
                .as_str()
                .unwrap()
                .to_owned(),
        ),
    ];
    for (what, token) in cases {
        let (status, challenge) = list_with(&server, Some(token)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}");
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\"")
                && challenge.contains(&format!(
                    "resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                    server.base
                )),
            "{what}: {challenge}"
        );
    }
    let (status, _) = list_with(&server, Some(good.clone())).await;
    assert_eq!(status, StatusCode::OK, "the real token still works");
    let log = server.settled_log().await;
    assert!(!log.contains(&good), "a token reached the log");
}

#[tokio::test]
async fn an_expired_token_gets_401_after_the_leeway() {
    let server = oidc_server(&[]).await;
    let token = access_token(
        &provider().issuer,
        &user("alice"),
        &server.mcp_url(),
        "expiring-client",
    )
    .await;
    let (status, _) = list_with(&server, Some(token.clone())).await;
    assert_eq!(status, StatusCode::OK, "valid for 2 s");
    // 2 s lifetime + 10 s leeway.
    tokio::time::sleep(std::time::Duration::from_secs(13)).await;
    let (status, challenge) = list_with(&server, Some(token)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        challenge.contains("error=\"invalid_token\"") && challenge.contains("expired"),
        "{challenge}"
    );
}

#[tokio::test]
async fn scopes_are_enforced_and_opaque_tokens_are_introspected() {
    let server = oidc_server(&["--oidc-scopes", "invoices:read"]).await;
    let p = provider();
    let alice = user("alice");
    let without = access_token(&p.issuer, &alice, &server.mcp_url(), "test-client").await;
    let (status, challenge) = list_with(&server, Some(without)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"invoices:read\""),
        "{challenge}"
    );
    let with = oidc::access_token_with_scope(
        &p.issuer,
        &alice,
        &server.mcp_url(),
        "test-client",
        "openid invoices:read",
    )
    .await;
    assert_eq!(list_with(&server, Some(with)).await.0, StatusCode::OK);

    let opaque = oidc::access_token_with_scope(
        &p.issuer,
        &alice,
        &server.mcp_url(),
        "opaque-client",
        "openid invoices:read",
    )
    .await;
    assert_eq!(opaque.split('.').count(), 1, "an opaque token");
    assert_eq!(list_with(&server, Some(opaque)).await.0, StatusCode::OK);
    let opaque_elsewhere = oidc::access_token_with_scope(
        &p.issuer,
        &alice,
        "http://127.0.0.1:9/other/mcp",
        "opaque-client",
        "openid invoices:read",
    )
    .await;
    assert_eq!(
        list_with(&server, Some(opaque_elsewhere)).await.0,
        StatusCode::UNAUTHORIZED
    );
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
    assert!(
        signed_in.final_page.body.contains("connected"),
        "{}",
        signed_in.final_page.body
    );
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
    assert!(
        done.final_page.body.contains("connected"),
        "{}",
        done.final_page.body
    );
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
