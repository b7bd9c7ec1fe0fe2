//! Tests of the demo provider, driving its router as grantry's client and a browser would.

use std::sync::Arc;

use axum::body::Body;
use axum::http::header::{
    AUTHORIZATION, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE,
};
use axum::http::{HeaderMap, Request, StatusCode};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use tower::ServiceExt as _;
use url::Url;

use super::*;
use crate::seal::{KEY_LEN, KeyRing, Sealer};

const ISSUER: &str = "http://127.0.0.1:8080/demo";
const REDIRECT: &str = "http://127.0.0.1:8080/oauth/callback";
// A verifier and its S256 challenge, computed outside this code base (Python's hashlib:
// base64url-nopad of SHA-256), so the test checks our PKCE against an independent answer.
const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "ngF5GsXcbwljx6u133FFr3Xht9xooA_DuaX_3QwODtc";
const STATE: &str = "opaque-state-123";

fn config() -> DemoConfig {
    DemoConfig::new(ISSUER, vec![REDIRECT.to_owned()])
}

fn provider(config: DemoConfig) -> DemoProvider {
    let ring = KeyRing::from_keys(&[[7; KEY_LEN]]).unwrap();
    DemoProvider::new(
        config,
        Arc::new(Sealer::new(ring, "http://127.0.0.1:8080/mcp")),
    )
}

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    fn header(&self, name: impl axum::http::header::AsHeaderName) -> &str {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    /// The query parameters of the Location this reply redirects to.
    fn location_params(&self) -> (Url, Vec<(String, String)>) {
        let url = Url::parse(self.header(LOCATION)).expect("a Location URL");
        let pairs = url.query_pairs().into_owned().collect();
        (url, pairs)
    }
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

async fn send(demo: &DemoProvider, request: Request<Body>) -> Reply {
    let response = demo.router().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    Reply {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

fn encode(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

async fn get(demo: &DemoProvider, path: &str, bearer: Option<&str>) -> Reply {
    let mut request = Request::get(path);
    if let Some(token) = bearer {
        request = request.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    send(demo, request.body(Body::empty()).unwrap()).await
}

async fn post_form(
    demo: &DemoProvider,
    path: &str,
    basic: Option<(&str, &str)>,
    pairs: &[(&str, &str)],
) -> Reply {
    let mut request = Request::post(path).header(CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some((id, secret)) = basic {
        let credentials = STANDARD.encode(format!(
            "{}:{}",
            encode_component(id),
            encode_component(secret)
        ));
        request = request.header(AUTHORIZATION, format!("Basic {credentials}"));
    }
    send(demo, request.body(Body::from(encode(pairs))).unwrap()).await
}

/// RFC 6749 §2.3.1: each Basic component is form-urlencoded first.
fn encode_component(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn authorize_params<'a>() -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", DEMO_CLIENT_ID),
        ("redirect_uri", REDIRECT),
        ("scope", DEMO_SCOPE),
        ("state", STATE),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
}

fn authorize_path(pairs: &[(&str, &str)]) -> String {
    format!("/authorize?{}", encode(pairs))
}

/// Approves as `user` on the consent form; returns the code from the redirect.
async fn approve(demo: &DemoProvider, user: &str) -> String {
    let mut form = authorize_params();
    form.extend([("user", user), ("decision", "approve")]);
    let reply = post_form(demo, "/authorize", None, &form).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.body);
    let (_, pairs) = reply.location_params();
    param(&pairs, "code").expect("a code").to_owned()
}

async fn redeem(demo: &DemoProvider, code: &str, verifier: &str) -> Reply {
    post_form(
        demo,
        "/token",
        Some((DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)),
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier),
        ],
    )
    .await
}

/// A code redeemed for tokens; returns the token response.
async fn tokens_for(demo: &DemoProvider, user: &str) -> Value {
    let code = approve(demo, user).await;
    let reply = redeem(demo, &code, VERIFIER).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.json()
}

fn assert_html_security_headers(reply: &Reply) {
    assert!(reply.header(CONTENT_TYPE).starts_with("text/html"));
    assert_eq!(reply.header(CACHE_CONTROL), "no-store");
    assert_eq!(reply.header("x-content-type-options"), "nosniff");
    assert_eq!(reply.header("referrer-policy"), "no-referrer");
    let csp = reply.header(CONTENT_SECURITY_POLICY);
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("form-action 'self'"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
}

mod authorize_errors;
mod flow;
mod token_errors;
