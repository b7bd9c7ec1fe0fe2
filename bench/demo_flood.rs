//! The attack on the demo provider, measured: anyone can get demo tokens (its client secret is
//! public), so a flood creates invoices under many names, each as large as the demo allows.
//! The memory it costs the server must level off at the demo's caps.
//!
//! `demo_flood BASE_URL SERVER_PID USERS INVOICES_PER_USER` (grantry with the demo provider and
//! `--rate-demo-ip` high enough) prints one JSON line per tenth of the flood: invoices created
//! so far, the server's RSS, and what the demo keeps (`/demo/stats`), then a summary line.

// Benchmark scaffolding, not product: an unwrap that fails is the run's failure, and nothing
// here is anyone's API.
#![allow(clippy::unwrap_used, unreachable_pub)]

use std::time::Instant;

use base64::Engine as _;
use futures::StreamExt;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const VERIFIER: &str = "demo-flood-verifier-demo-flood-verifier-0123456789";
/// Requests in flight at once.
const PARALLEL: usize = 32;

#[tokio::main]
async fn main() {
    grantry_base::net::install_tls_provider();
    let mut args = std::env::args().skip(1);
    let base = args.next().expect("BASE_URL");
    let pid: u32 = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("SERVER_PID");
    let users: usize = args.next().and_then(|a| a.parse().ok()).expect("USERS");
    let per_user: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("INVOICES_PER_USER");
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let rss_before = rss_kib(pid);
    let started = Instant::now();
    let tokens: Vec<String> = futures::stream::iter(0..users)
        .map(|u| token(&http, &base, format!("flooder{u}")))
        .buffered(PARALLEL)
        .collect()
        .await;
    let total = users * per_user;
    let mut peak = rss_before;
    for tenth in 0..10 {
        let from = total * tenth / 10;
        let to = total * (tenth + 1) / 10;
        futures::stream::iter(from..to)
            .map(|n| create(&http, &base, &tokens[n % users], n))
            .buffer_unordered(PARALLEL)
            .collect::<Vec<()>>()
            .await;
        let rss = rss_kib(pid);
        peak = peak.max(rss);
        let stats = stats(&http, &base).await;
        println!(
            r#"{{"created":{to},"rss_kib":{rss},"invoices_kept":{},"users_kept":{}}}"#,
            stats["invoices_kept"], stats["users_kept"]
        );
    }
    println!(
        r#"{{"users":{users},"created":{total},"seconds":{:.1},"rss_before_kib":{rss_before},"rss_peak_kib":{peak},"rss_after_kib":{}}}"#,
        started.elapsed().as_secs_f64(),
        rss_kib(pid)
    );
}

/// A write-scoped demo access token for `user`, as any client of the demo can get one.
async fn token(http: &reqwest::Client, base: &str, user: String) -> String {
    let challenge =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(VERIFIER));
    let redirect_uri = format!("{base}/oauth/callback");
    let decided = http
        .post(format!("{base}/demo/authorize"))
        .form(&[
            ("response_type", "code"),
            ("client_id", grantry::demo::DEMO_CLIENT_ID),
            ("redirect_uri", &redirect_uri),
            ("scope", "invoices:read invoices:write"),
            ("state", "s"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("decision", "approve"),
            ("user", &user),
        ])
        .send()
        .await
        .expect("the demo answers");
    let location = decided.headers()["location"].to_str().unwrap().to_owned();
    let code = url::Url::parse(&location)
        .unwrap()
        .query_pairs()
        .find(|(name, _)| name == "code")
        .map(|(_, value)| value.into_owned())
        .expect("a code");
    let tokens: Value = http
        .post(format!("{base}/demo/token"))
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
    tokens["access_token"].as_str().expect("a token").to_owned()
}

/// Creates one invoice with every field as large as the demo accepts.
async fn create(http: &reqwest::Client, base: &str, token: &str, n: usize) {
    let invoice = json!({
        "customer_email": format!("{}@acme.example", "a".repeat(200)),
        "customer_name": "N".repeat(200),
        "total_cents": 12050, "currency": "EUR", "due": "2099-01-31",
        "description": "x".repeat(500),
    });
    let answer = http
        .post(format!("{base}/demo/api/invoices"))
        .bearer_auth(token)
        .header("idempotency-key", format!("flood-{n}"))
        .json(&invoice)
        .send()
        .await
        .expect("the demo answers");
    assert_eq!(answer.status(), 201, "{}", answer.text().await.unwrap());
}

async fn stats(http: &reqwest::Client, base: &str) -> Value {
    http.get(format!("{base}/demo/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}
