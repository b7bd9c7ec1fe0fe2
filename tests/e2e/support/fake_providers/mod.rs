//! Local fakes of the billing providers grantry has adapters for, on one loopback port, each
//! under `/{provider}`: an OAuth server (authorize approves at once; token endpoint with
//! refresh-token rotation that revokes the whole family when a used refresh token comes back,
//! as Xero and FreshBooks document; revocation) and the invoice API in the provider's own
//! response shape (from its API reference), with its pagination and status vocabulary.
//!
//! Real providers cannot be reached from CI, and their sandboxes need accounts; these fakes
//! serve the documented shapes so each adapter is exercised end to end through the URLs a
//! `--providers` file overrides.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

mod invoices;

pub use invoices::open_count;
use invoices::{api, api_write};

/// The providers, their fake data sizes, and which adapter each uses.
pub const PROVIDERS: [(&str, usize); 6] = [
    ("stripe", 150),
    ("xero", 130),
    ("quickbooks", 130),
    ("freshbooks", 130),
    ("zoho", 230),
    ("sage", 130),
];

/// What the fake has seen, for assertions.
#[derive(Default)]
pub struct Counters {
    pub code_redemptions: AtomicU64,
    pub refreshes: AtomicU64,
    pub family_revocations: AtomicU64,
    pub revocations: AtomicU64,
    pub busy_answers: AtomicU64,
}

#[derive(Default)]
struct Tokens {
    /// access token → (provider, family, expires at unix seconds).
    access: HashMap<String, (String, u64, i64)>,
    /// live refresh token → family.
    refresh: HashMap<String, u64>,
    /// refresh tokens already rotated away → family.
    used_refresh: HashMap<String, u64>,
    revoked_families: HashSet<u64>,
    codes: HashMap<String, String>,
    next: u64,
}

/// Invoices written through the fake's API (Xero's shape).
#[derive(Default)]
pub struct Written {
    /// Created invoices, by id.
    pub created: HashMap<String, Value>,
    pub by_idempotency_key: HashMap<String, String>,
}

#[derive(Clone)]
pub struct Fake {
    pub base: String,
    pub counters: Arc<Counters>,
    pub written: Arc<Mutex<Written>>,
    tokens: Arc<Mutex<Tokens>>,
    settings: Arc<Mutex<Settings>>,
}

/// Knobs a test turns.
#[derive(Clone)]
pub struct Settings {
    /// `expires_in` of tokens from a code.
    pub first_token_ttl: i64,
    /// `expires_in` of tokens from a refresh.
    pub refreshed_token_ttl: i64,
    /// How long the token endpoint takes to answer a refresh (widens races).
    pub refresh_delay: Duration,
    /// How long it takes to answer a code's redemption (the code is used up at once, as a
    /// provider that redeemed it and whose answer was lost).
    pub code_delay: Duration,
    /// Answer every refresh with `invalid_grant`.
    pub refuse_refresh: bool,
    /// API answers to give before serving normally: 429 with each `Retry-After`, in order.
    pub busy: Vec<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            first_token_ttl: 3600,
            refreshed_token_ttl: 3600,
            refresh_delay: Duration::ZERO,
            code_delay: Duration::ZERO,
            refuse_refresh: false,
            busy: Vec::new(),
        }
    }
}

fn now() -> i64 {
    std::time::UNIX_EPOCH.elapsed().unwrap().as_secs() as i64
}

impl Fake {
    pub async fn start() -> Fake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let fake = Fake {
            base: format!("http://{}", listener.local_addr().unwrap()),
            counters: Arc::default(),
            written: Arc::default(),
            tokens: Arc::default(),
            settings: Arc::new(Mutex::new(Settings::default())),
        };
        let app = Router::new()
            .route("/{provider}/oauth/authorize", get(authorize))
            .route("/{provider}/oauth/token", post(token))
            .route("/{provider}/oauth/revoke", post(revoke))
            .route("/{provider}/api/{*path}", get(api).post(api_write))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        fake
    }

    pub fn set(&self, change: impl FnOnce(&mut Settings)) {
        change(&mut self.settings.lock().unwrap());
    }

    /// A `--providers` file connecting every fake provider, `default` first.
    pub fn catalog(&self, default: &str) -> String {
        let mut text = format!("default = \"{default}\"\n");
        for (id, _) in PROVIDERS {
            let base = &self.base;
            text.push_str(&format!(
                "[providers.{id}]\nclient_id = \"client-{id}\"\nclient_secret_env = \"FAKE_SECRET\"\n\
                 authorize_url = \"{base}/{id}/oauth/authorize\"\ntoken_url = \"{base}/{id}/oauth/token\"\n\
                 revoke_url = \"{base}/{id}/oauth/revoke\"\napi_base = \"{base}/{id}/api\"\n"
            ));
        }
        text
    }

    /// Revokes every access token issued so far (they still look unexpired to grantry).
    pub fn revoke_access_tokens(&self) {
        self.tokens.lock().unwrap().access.clear();
    }

    /// Live access tokens (for checks that a token never leaks).
    pub fn issued_tokens(&self) -> Vec<String> {
        let tokens = self.tokens.lock().unwrap();
        tokens
            .access
            .keys()
            .chain(tokens.refresh.keys())
            .chain(tokens.used_refresh.keys())
            .cloned()
            .collect()
    }
}

/// The redirect back with a code at once (the user approved), plus what each provider adds.
async fn authorize(
    State(fake): State<Fake>,
    Path(provider): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let mut tokens = fake.tokens.lock().unwrap();
    tokens.next += 1;
    let code = format!("code-{provider}-{}-{}", tokens.next, rand::random::<u64>());
    tokens.codes.insert(code.clone(), provider.clone());
    super::leaks::record("provider code", [code.as_str()]);
    let mut back = url::Url::parse(&query["redirect_uri"]).unwrap();
    back.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &query["state"]);
    if provider == "quickbooks" {
        back.query_pairs_mut().append_pair("realmId", "9130355");
    }
    if provider == "zoho" {
        let server = fake.base.clone();
        back.query_pairs_mut()
            .append_pair("location", "us")
            .append_pair("accounts-server", &server);
    }
    Redirect::to(back.as_str()).into_response()
}

fn issue(tokens: &mut Tokens, provider: &str, family: u64, ttl: i64) -> Value {
    tokens.next += 1;
    let access = format!("at-{provider}-{}-{}", tokens.next, rand::random::<u64>());
    let refresh = format!("rt-{provider}-{}-{}", tokens.next, rand::random::<u64>());
    tokens
        .access
        .insert(access.clone(), (provider.to_owned(), family, now() + ttl));
    tokens.refresh.insert(refresh.clone(), family);
    super::leaks::record("provider tokens", [access.as_str(), refresh.as_str()]);
    let mut body =
        json!({"access_token": access, "token_type": "bearer", "refresh_token": refresh});
    // Stripe Apps send no expires_in: grantry must assume the catalog's lifetime.
    if provider != "stripe" {
        body["expires_in"] = json!(ttl);
    }
    body
}

async fn token(State(fake): State<Fake>, Path(provider): Path<String>, body: String) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let settings = fake.settings.lock().unwrap().clone();
    let invalid_grant = || {
        (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "invalid_grant"})),
        )
            .into_response()
    };
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let issued = {
                let mut tokens = fake.tokens.lock().unwrap();
                let code = form.get("code").cloned().unwrap_or_default();
                if tokens.codes.remove(&code).as_deref() != Some(provider.as_str()) {
                    return invalid_grant();
                }
                fake.counters
                    .code_redemptions
                    .fetch_add(1, Ordering::SeqCst);
                tokens.next += 1;
                let family = tokens.next;
                issue(&mut tokens, &provider, family, settings.first_token_ttl)
            };
            tokio::time::sleep(settings.code_delay).await;
            axum::Json(issued).into_response()
        }
        Some("refresh_token") => {
            fake.counters.refreshes.fetch_add(1, Ordering::SeqCst);
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            // The rotation happens at once; the answer comes after `refresh_delay`, so a
            // client that gives up meanwhile has lost the new tokens (the case to survive).
            let answer = {
                let mut tokens = fake.tokens.lock().unwrap();
                if settings.refuse_refresh {
                    None
                } else if let Some(family) = tokens.used_refresh.get(&presented).copied() {
                    // Reuse of a rotated token: a stolen-token signal; the whole family dies.
                    fake.counters
                        .family_revocations
                        .fetch_add(1, Ordering::SeqCst);
                    tokens.revoked_families.insert(family);
                    tokens.refresh.retain(|_, f| *f != family);
                    None
                } else if let Some(family) = tokens.refresh.remove(&presented) {
                    tokens.used_refresh.insert(presented, family);
                    Some(issue(
                        &mut tokens,
                        &provider,
                        family,
                        settings.refreshed_token_ttl,
                    ))
                } else {
                    None
                }
            };
            tokio::time::sleep(settings.refresh_delay).await;
            match answer {
                Some(body) => axum::Json(body).into_response(),
                None => invalid_grant(),
            }
        }
        _ => (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "unsupported_grant_type"})),
        )
            .into_response(),
    }
}

async fn revoke(State(fake): State<Fake>, body: String) -> StatusCode {
    fake.counters.revocations.fetch_add(1, Ordering::SeqCst);
    let _ = body;
    StatusCode::OK
}

/// Whether the request carries a live access token of `provider`.
pub(super) fn authorized(fake: &Fake, provider: &str, headers: &HeaderMap) -> bool {
    let Some(value) = headers.get("authorization").and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let scheme = if provider == "zoho" {
        "Zoho-oauthtoken "
    } else {
        "Bearer "
    };
    let Some(token) = value.strip_prefix(scheme) else {
        return false;
    };
    let tokens = fake.tokens.lock().unwrap();
    tokens
        .access
        .get(token)
        .is_some_and(|(p, family, expires)| {
            p == provider && *expires > now() && !tokens.revoked_families.contains(family)
        })
}
