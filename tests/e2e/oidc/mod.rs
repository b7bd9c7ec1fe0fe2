//! `oidc` identity against a real OpenID Connect provider (oidc-provider, tests/oidc): grantry
//! as a resource server here; the browser login, and proof that only the caller can finish a
//! sign-in, in [`browser`].

mod browser;
mod connections;
mod doors;
mod no_person;
mod scopes;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::oidc::{self, access_token, provider, user};
use crate::support::{Mcp, Server};

pub(super) async fn oidc_server(extra: &[&str]) -> Server {
    let mut args = oidc::grantry_args(&provider().issuer);
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start(&args).await
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
