//! Local fakes of the billing providers grantry has adapters for, on one loopback port, each
//! under `/{provider}`: an OAuth server (authorize approves at once; token endpoint with
//! refresh-token rotation that revokes the whole family when a used refresh token comes back,
//! as Xero and FreshBooks document; revocation) and the invoice API in the provider's own
//! response shape (from its API reference), with its pagination and status vocabulary.
//!
//! Real providers cannot be reached from CI, and their sandboxes need accounts; these fakes
//! serve the documented shapes so each adapter is exercised end to end through the URLs a
//! `--providers` file overrides. They check what the real ones check: the client's
//! authentication in the provider's own way (`token_auth` of the built-in catalog: HTTP Basic,
//! the form body, or Stripe's secret key as the Basic user), the PKCE verifier against the
//! challenge, the `redirect_uri` against the authorization request's, and for a revocation
//! that the token is one they issued, carried as the provider expects (form, JSON, query).

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
use invoices::{api, api_delete, api_write};

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
    /// Refresh tokens presented after the idle window closed (`Settings::refresh_idle`).
    pub idle_deaths: AtomicU64,
    /// When each successful refresh happened.
    pub refreshed_at: Mutex<Vec<std::time::Instant>>,
    /// The Xero organisation of each grant revoked (its token) or disconnected alone
    /// (`DELETE /connections/{id}`), in order (`?` for other providers').
    pub revoked_tenants: Mutex<Vec<String>>,
    /// The provider of each revocation, in order.
    pub revoked_at: Mutex<Vec<String>>,
    /// The `traceparent` header of each API request that carried one, in order.
    pub traceparents: Mutex<Vec<String>>,
    /// The `scope` of each Xero authorization request, in order.
    pub xero_scopes_asked: Mutex<Vec<String>>,
    /// API requests refused for want of a scope (403).
    pub refused_for_scope: AtomicU64,
}

/// Xero organisations the fake knows: (tenant id, name). The person picks one at consent, as
/// on Xero's own page (`Settings::xero_tenant`).
pub const XERO_TENANTS: [(&str, &str); 2] = [
    ("tenant-1", "Demo Company (UK)"),
    ("tenant-2", "Second Company (NZ)"),
];

#[derive(Default)]
struct Tokens {
    /// access token → (provider, family, expires at unix seconds).
    access: HashMap<String, (String, u64, i64)>,
    /// live refresh token → family.
    refresh: HashMap<String, u64>,
    /// live refresh token → when it was issued (for the idle window).
    refresh_issued: HashMap<String, std::time::Instant>,
    /// refresh tokens already rotated away → family.
    used_refresh: HashMap<String, u64>,
    revoked_families: HashSet<u64>,
    /// Unredeemed codes, with what their authorization request said.
    codes: HashMap<String, CodeRequest>,
    /// The Xero organisation each grant (family) was consented for.
    tenant_of_family: HashMap<u64, String>,
    /// Xero's `authentication_event_id` of each sign-in → its organisation.
    auth_events: HashMap<String, String>,
    /// Xero: the scopes each grant (family) was consented for, space-separated.
    scopes_of_family: HashMap<u64, String>,
    next: u64,
}

/// What a code was issued for: the token request must match it.
struct CodeRequest {
    provider: String,
    redirect_uri: String,
    /// The PKCE S256 challenge, when the request had one.
    code_challenge: Option<String>,
    /// Xero: the organisation the person picked at consent.
    tenant: Option<String>,
    /// Xero: the scopes the person granted (what was asked, less what they withheld).
    scopes: Option<String>,
}

/// The client every fake provider registered: `client-{provider}` with this secret.
const CLIENT_SECRET: &str = "fake-client-secret";

/// How each provider authenticates its client, as the built-in catalog says (`token_auth`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum ClientAuth {
    /// `client_secret_basic`.
    Basic,
    /// `client_secret_post`.
    Post,
    /// Stripe: HTTP Basic with the secret key as the user name.
    SecretKey,
}

fn client_auth(provider: &str) -> ClientAuth {
    match provider {
        "stripe" => ClientAuth::SecretKey,
        "xero" | "quickbooks" => ClientAuth::Basic,
        _ => ClientAuth::Post,
    }
}

/// Whether the request authenticates `provider`'s client in the provider's way, and in no
/// other (RFC 6749 §2.3: one method per request).
fn client_authenticated(
    provider: &str,
    headers: &HeaderMap,
    body: &HashMap<String, String>,
) -> bool {
    use base64::Engine as _;
    let client_id = format!("client-{provider}");
    let basic = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok());
    let in_body = (body.get("client_id"), body.get("client_secret"));
    match client_auth(provider) {
        ClientAuth::Basic => {
            basic == Some(format!("{client_id}:{CLIENT_SECRET}")) && in_body == (None, None)
        }
        ClientAuth::SecretKey => basic == Some(format!("{CLIENT_SECRET}:")) && in_body.1.is_none(),
        ClientAuth::Post => {
            basic.is_none() && in_body == (Some(&client_id), Some(&CLIENT_SECRET.to_owned()))
        }
    }
}

/// RFC 7636 S256: the challenge a verifier answers.
fn s256(verifier: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

/// Invoices written through the fake's API (Xero's shape).
#[derive(Default)]
pub struct Written {
    /// Created invoices, by id.
    pub created: HashMap<String, Value>,
    pub by_idempotency_key: HashMap<String, String>,
    /// Invoices voided.
    pub voids: u32,
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
    /// A refresh token unused for this long is dead (`invalid_grant`), as Xero's after 60
    /// days.
    pub refresh_idle: Option<Duration>,
    /// Answer refreshes with this status (a 5xx outage) instead.
    pub refresh_outage: Option<u16>,
    /// The Xero organisation the next consent picks (one of [`XERO_TENANTS`]).
    pub xero_tenant: &'static str,
    /// At Xero's consent, the person unticks write access (`accounting.invoices`).
    pub xero_withhold_write: bool,
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
            refresh_idle: None,
            refresh_outage: None,
            xero_tenant: XERO_TENANTS[0].0,
            xero_withhold_write: false,
        }
    }
}

fn now() -> i64 {
    std::time::UNIX_EPOCH.elapsed().unwrap().as_secs() as i64
}

impl Fake {
    /// The organisation of a Xero sign-in, by its `authentication_event_id`.
    pub(super) fn tenant_of_event(&self, event: &str) -> Option<String> {
        self.tokens.lock().unwrap().auth_events.get(event).cloned()
    }

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
            .route(
                "/{provider}/api/{*path}",
                get(api).post(api_write).delete(api_delete),
            )
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

    /// Revokes every grant, as a user removing the app at the provider: refresh tokens are
    /// refused (`invalid_grant`) and access tokens answered 401.
    pub fn revoke_everything(&self) {
        let mut tokens = self.tokens.lock().unwrap();
        let families: Vec<u64> = tokens.access.values().map(|(_, f, _)| *f).collect();
        tokens.revoked_families.extend(families);
        tokens.refresh.clear();
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
    if query.get("client_id") != Some(&format!("client-{provider}")) {
        return (StatusCode::BAD_REQUEST, "unknown client_id").into_response();
    }
    let code_challenge = match query.get("code_challenge_method").map(String::as_str) {
        Some("S256") => query.get("code_challenge").cloned(),
        Some(_) => return (StatusCode::BAD_REQUEST, "only S256").into_response(),
        None => None,
    };
    let settings = fake.settings.lock().unwrap().clone();
    let request = CodeRequest {
        provider: provider.clone(),
        redirect_uri: query["redirect_uri"].clone(),
        code_challenge,
        tenant: (provider == "xero").then(|| settings.xero_tenant.to_owned()),
        scopes: (provider == "xero").then(|| {
            let asked = query.get("scope").map_or("", String::as_str);
            xero_consent(asked, settings.xero_withhold_write)
        }),
    };
    if provider == "xero" {
        let asked = query.get("scope").cloned().unwrap_or_default();
        fake.counters.xero_scopes_asked.lock().unwrap().push(asked);
    }
    tokens.codes.insert(code.clone(), request);
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

/// What Xero's consent grants of `asked`: all of it, or (the person unticked it) all but
/// write access; a granular read scope stands in for the write scope withheld.
fn xero_consent(asked: &str, withhold_write: bool) -> String {
    let mut granted: Vec<&str> = asked
        .split(' ')
        .filter(|s| !s.is_empty())
        .filter(|s| !withhold_write || *s != XERO_WRITE_SCOPE)
        .collect();
    if withhold_write && !granted.contains(&XERO_READ_SCOPE) {
        granted.push(XERO_READ_SCOPE);
    }
    granted.join(" ")
}

/// Xero's granular scopes for invoices: reading, and reading and writing.
const XERO_READ_SCOPE: &str = "accounting.invoices.read";
const XERO_WRITE_SCOPE: &str = "accounting.invoices";

fn issue(tokens: &mut Tokens, provider: &str, family: u64, ttl: i64) -> Value {
    tokens.next += 1;
    let mut access = format!("at-{provider}-{}-{}", tokens.next, rand::random::<u64>());
    if let Some(tenant) = tokens.tenant_of_family.get(&family).cloned() {
        // Xero's access tokens are JWTs naming the sign-in (`authentication_event_id`), which
        // `GET /connections?authEventId=` filters by.
        use base64::Engine as _;
        let event = format!("ae-{family}");
        let claims = json!({"authentication_event_id": event, "jti": access});
        let encode =
            |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        access = format!(
            "{}.{}.fake-signature",
            encode(&json!({"alg": "RS256"})),
            encode(&claims)
        );
        tokens.auth_events.insert(event, tenant);
    }
    let refresh = format!("rt-{provider}-{}-{}", tokens.next, rand::random::<u64>());
    tokens
        .access
        .insert(access.clone(), (provider.to_owned(), family, now() + ttl));
    tokens.refresh.insert(refresh.clone(), family);
    tokens
        .refresh_issued
        .insert(refresh.clone(), std::time::Instant::now());
    super::leaks::record("provider tokens", [access.as_str(), refresh.as_str()]);
    let mut body =
        json!({"access_token": access, "token_type": "bearer", "refresh_token": refresh});
    // Stripe Apps send no expires_in: grantry must assume the catalog's lifetime.
    if provider != "stripe" {
        body["expires_in"] = json!(ttl);
    }
    // Xero names the scopes granted, which may be fewer than asked.
    if let Some(scopes) = tokens.scopes_of_family.get(&family) {
        body["scope"] = json!(scopes);
    }
    body
}

async fn token(
    State(fake): State<Fake>,
    Path(provider): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    if !client_authenticated(&provider, &headers, &form) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_client"})),
        )
            .into_response();
    }
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
                // Used up whatever follows (RFC 6749 §4.1.2), then checked.
                let Some(request) = tokens.codes.remove(&code) else {
                    return invalid_grant();
                };
                let verifier = form.get("code_verifier");
                let pkce_ok = match (&request.code_challenge, verifier) {
                    (Some(challenge), Some(verifier)) => s256(verifier) == *challenge,
                    (Some(_), None) => false,
                    (None, _) => true,
                };
                if request.provider != provider
                    || form.get("redirect_uri") != Some(&request.redirect_uri)
                    || !pkce_ok
                {
                    return invalid_grant();
                }
                fake.counters
                    .code_redemptions
                    .fetch_add(1, Ordering::SeqCst);
                tokens.next += 1;
                let family = tokens.next;
                if let Some(tenant) = request.tenant {
                    tokens.tenant_of_family.insert(family, tenant);
                }
                if let Some(scopes) = request.scopes {
                    tokens.scopes_of_family.insert(family, scopes);
                }
                issue(&mut tokens, &provider, family, settings.first_token_ttl)
            };
            tokio::time::sleep(settings.code_delay).await;
            axum::Json(issued).into_response()
        }
        Some("refresh_token") => {
            fake.counters.refreshes.fetch_add(1, Ordering::SeqCst);
            if let Some(status) = settings.refresh_outage {
                return StatusCode::from_u16(status).unwrap().into_response();
            }
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            // The rotation happens at once; the answer comes after `refresh_delay`, so a
            // client that gives up meanwhile has lost the new tokens (the case to survive).
            let answer = {
                let mut tokens = fake.tokens.lock().unwrap();
                let idle_too_long = settings.refresh_idle.is_some_and(|idle| {
                    tokens
                        .refresh_issued
                        .get(&presented)
                        .is_some_and(|issued| issued.elapsed() > idle)
                });
                if settings.refuse_refresh {
                    None
                } else if idle_too_long {
                    fake.counters.idle_deaths.fetch_add(1, Ordering::SeqCst);
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
                    fake.counters
                        .refreshed_at
                        .lock()
                        .unwrap()
                        .push(std::time::Instant::now());
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

/// RFC 7009, as each provider takes it: the token in a form body (with the client's
/// credentials where its token endpoint takes them there), in JSON (Intuit), or in the query
/// (Zoho, which asks for nothing else). A token this fake never issued is answered 200, as the
/// RFC says, and is not counted; a revoked refresh token ends its whole family.
async fn revoke(
    State(fake): State<Fake>,
    Path(provider): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: String,
) -> StatusCode {
    let fields: HashMap<String, String> = match provider.as_str() {
        "quickbooks" => serde_json::from_str::<HashMap<String, String>>(&body).unwrap_or_default(),
        "zoho" => query,
        _ => url::form_urlencoded::parse(body.as_bytes())
            .into_owned()
            .collect(),
    };
    let authenticated = provider == "zoho"
        || client_authenticated(&provider, &headers, &{
            let mut credentials = fields.clone();
            credentials.retain(|name, _| name.starts_with("client_"));
            credentials
        });
    if !authenticated {
        return StatusCode::UNAUTHORIZED;
    }
    let Some(token) = fields.get("token") else {
        return StatusCode::BAD_REQUEST;
    };
    let mut tokens = fake.tokens.lock().unwrap();
    let family = tokens
        .refresh
        .get(token)
        .or_else(|| tokens.used_refresh.get(token))
        .copied()
        .or_else(|| {
            tokens
                .access
                .get(token)
                .filter(|(p, _, _)| *p == provider)
                .map(|(_, family, _)| *family)
        });
    if let Some(family) = family {
        tokens.revoked_families.insert(family);
        tokens.refresh.retain(|_, f| *f != family);
        fake.counters.revocations.fetch_add(1, Ordering::SeqCst);
        fake.counters.revoked_at.lock().unwrap().push(provider);
        let tenant = tokens.tenant_of_family.get(&family).cloned();
        fake.counters
            .revoked_tenants
            .lock()
            .unwrap()
            .push(tenant.unwrap_or_else(|| "?".into()));
    }
    StatusCode::OK
}

/// What a request does at a provider's API: Xero checks its token's scopes for it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Need {
    Read,
    Write,
}

/// Whether the request's token (a live one: see [`authorized`]) may do `need` at `provider`:
/// at Xero, reading takes `accounting.invoices.read` or `accounting.invoices`, writing
/// `accounting.invoices`; the other fakes do not check scopes.
pub(super) fn scope_allows(fake: &Fake, provider: &str, headers: &HeaderMap, need: Need) -> bool {
    if provider != "xero" {
        return true;
    }
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let tokens = fake.tokens.lock().unwrap();
    let Some((_, family, _)) = tokens.access.get(token) else {
        return false;
    };
    let granted = tokens
        .scopes_of_family
        .get(family)
        .cloned()
        .unwrap_or_default();
    let has = |scope: &str| granted.split(' ').any(|s| s == scope);
    match need {
        Need::Read => has(XERO_READ_SCOPE) || has(XERO_WRITE_SCOPE),
        Need::Write => has(XERO_WRITE_SCOPE),
    }
}

/// Xero's answer to a token without the scope a request needs.
pub(super) fn insufficient_scope() -> Response {
    (
        StatusCode::FORBIDDEN,
        axum::Json(json!({"Type": null, "Title": "Forbidden", "Status": 403,
            "Detail": "AuthorizationUnsuccessful: insufficient_scope"})),
    )
        .into_response()
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
