//! The demo provider as an unauthenticated attacker meets it: its client secret is public, so
//! anyone can get demo tokens. It is off under oidc unless asked for, rate limited per
//! address, and whatever it keeps in memory is bounded.

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{Server, oidc, with_room_in_the_window};

/// A client that shows redirects rather than following them (the code is in one).
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

const VERIFIER: &str = "flood-verifier-flood-verifier-flood-verifier-0123";

/// A demo access token with write scope for `user`, got as any client of the demo could: the
/// consent form posted directly, then the token endpoint with the demo's public credentials.
async fn demo_token(http: &reqwest::Client, server: &Server, user: &str) -> String {
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(VERIFIER.as_bytes()));
    let redirect_uri = format!("{}/oauth/callback", server.base);
    let decided = http
        .post(format!("{}/demo/authorize", server.base))
        .form(&[
            ("response_type", "code"),
            ("client_id", grantry::demo::DEMO_CLIENT_ID),
            ("redirect_uri", &redirect_uri),
            ("scope", "invoices:read invoices:write"),
            ("state", "s"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("decision", "approve"),
            ("user", user),
        ])
        .send()
        .await
        .unwrap();
    let location = decided.headers()["location"].to_str().unwrap().to_owned();
    let code = url::Url::parse(&location)
        .unwrap()
        .query_pairs()
        .find(|(name, _)| name == "code")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_else(|| panic!("a code: {location}"));
    let tokens: Value = http
        .post(format!("{}/demo/token", server.base))
        .basic_auth(
            grantry::demo::DEMO_CLIENT_ID,
            Some(grantry::demo::DEMO_CLIENT_SECRET),
        )
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect_uri),
            ("code_verifier", VERIFIER),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    crate::support::leaks::record("demo code and token", [code.as_str(), access.as_str()]);
    access
}

/// Creates `count` invoices for the token's user, each with the largest description allowed.
async fn create_invoices(http: &reqwest::Client, server: &Server, token: &str, count: usize) {
    let invoice = json!({
        "customer_email": "ap@acme.example", "customer_name": "Acme GmbH",
        "total_cents": 12050, "currency": "EUR", "due": "2099-01-31",
        "description": "x".repeat(500),
    });
    for n in 0..count {
        let created = http
            .post(format!("{}/demo/api/invoices", server.base))
            .bearer_auth(token)
            .header("idempotency-key", format!("flood-{n}"))
            .json(&invoice)
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{}", created.text().await.unwrap());
    }
}

#[tokio::test]
async fn a_flood_of_created_invoices_keeps_only_the_newest_per_user_and_in_all() {
    let server = Server::start(&["--rate-demo-ip", "1000000"]).await;
    let http = no_redirects();
    // One user far past their own cap ...
    let heavy = demo_token(&http, &server, "heavy").await;
    create_invoices(&http, &server, &heavy, 120).await;
    let listed: Value = http
        .get(format!("{}/demo/api/invoices?status=all", server.base))
        .bearer_auth(&heavy)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let numbers: Vec<&str> = listed["invoices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["number"].as_str())
        .filter(|n| n.starts_with("DEMO-N"))
        .collect();
    assert_eq!(numbers.len(), 50, "{numbers:?}");
    assert_eq!(numbers[0], "DEMO-N0071", "the oldest went first");
    assert_eq!(numbers[49], "DEMO-N0120");
    // ... and many users together past the total cap, eight at a time.
    let users: Vec<String> = (0..110).map(|u| format!("flooder{u}")).collect();
    for batch in users.chunks(8) {
        let runs = batch.iter().map(|user| {
            let (http, server) = (&http, &server);
            async move {
                let token = demo_token(http, server, user).await;
                create_invoices(http, server, &token, 50).await;
            }
        });
        futures::future::join_all(runs).await;
    }
    let stats = server.demo_stats().await;
    assert_eq!(stats["invoices_created"], 120 + 110 * 50);
    assert_eq!(stats["invoices_kept"], 5_000, "{stats}");
    assert!(stats["users_kept"].as_u64().unwrap() <= 111, "{stats}");
}

#[tokio::test]
async fn oversized_invoice_fields_are_refused_not_kept() {
    let server = Server::start(&[]).await;
    let http = no_redirects();
    let token = demo_token(&http, &server, "big").await;
    let refused = http
        .post(format!("{}/demo/api/invoices", server.base))
        .bearer_auth(&token)
        .header("idempotency-key", "big")
        .json(&json!({
            "customer_email": "ap@acme.example", "customer_name": "Acme",
            "total_cents": 100, "currency": "EUR", "due": "2099-01-31",
            "description": "x".repeat(12_000),
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    assert_eq!(server.demo_stats().await["invoices_kept"], 0);
}

#[tokio::test]
async fn demo_routes_past_the_address_limit_get_429() {
    let server = Server::start(&["--rate-demo-ip", "3"]).await;
    let url = format!(
        "{}/demo/.well-known/oauth-authorization-server",
        server.base
    );
    with_room_in_the_window(10).await;
    for _ in 0..3 {
        assert_eq!(reqwest::get(&url).await.unwrap().status(), 200);
    }
    let refused = reqwest::get(&url).await.unwrap();
    assert_eq!(refused.status(), 429);
    let retry: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
}

#[tokio::test]
async fn the_demo_is_off_under_oidc_unless_asked_for_and_then_warned_about() {
    let provider = oidc::provider();
    let args = oidc::grantry_args(&provider.issuer);
    // The shared arguments turn the demo on; without them it is off, and a deployment
    // offers only its own providers.
    let catalog = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        catalog.path(),
        "[providers.acme]\ndisplay_name = \"Acme Billing\"\n\
         authorize_url = \"http://127.0.0.1:9/authorize\"\n\
         token_url = \"http://127.0.0.1:9/token\"\napi_base = \"http://127.0.0.1:9/api\"\n\
         client_id = \"grantry\"\nclient_secret_env = \"FAKE_SECRET\"\nadapter = \"demo\"\n",
    )
    .unwrap();
    let mut without: Vec<&str> = args[..args.len() - 2].iter().map(String::as_str).collect();
    without.extend(["--providers", catalog.path().to_str().unwrap()]);
    let server = Server::start(&without).await;
    let metadata = format!(
        "{}/demo/.well-known/oauth-authorization-server",
        server.base
    );
    assert_eq!(reqwest::get(&metadata).await.unwrap().status(), 404);
    assert!(!server.log().contains("Demo Billing"));

    let asked: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start(&asked).await;
    let metadata = format!(
        "{}/demo/.well-known/oauth-authorization-server",
        server.base
    );
    assert_eq!(reqwest::get(&metadata).await.unwrap().status(), 200);
    assert!(
        server.log_shows("--demo is on with oidc identity").await,
        "{}",
        server.log()
    );
}
