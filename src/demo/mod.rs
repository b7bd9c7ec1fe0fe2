//! The built-in demo provider: a small, honest OAuth 2.0 authorization server and billing API.
//!
//! It is mounted by the main app under `/demo` on grantry's own listener and is on by default,
//! so grantry works offline with no setup. grantry's OAuth client talks to it over real HTTP
//! exactly as it would to a real provider: RFC 8414 metadata, authorization code + PKCE (S256
//! only), RFC 9207 `iss` on every authorization response, client authentication by HTTP Basic
//! or form body, refresh, RFC 7009 revocation, and a bearer-protected invoice API whose JSON is
//! deliberately *not* grantry's normalized shape, so the adapter has real mapping to do.
//!
//! State: codes and tokens are values sealed with the project's [`Sealer`] (purposes
//! [`Purpose::DemoCode`], [`Purpose::DemoAccessToken`], [`Purpose::DemoRefreshToken`]), so
//! nothing is stored for them. The one exception is single use of codes: an in-process set of
//! consumed code ids. That set is **per process**: the demo provider is meant for one process,
//! and two replicas behind a load balancer could each redeem the same code once.
//!
//! Files: `authorize` (consent and code issue), `token` (code and refresh grants, revocation),
//! `client_auth` (who is calling `/token`), `codes` (sealed claims, single use), `api` (the
//! invoice API), `invoices` (seeded data), `params` (strict form/query parsing), `scope` (known scopes), `pages`
//! (HTML responses and their security headers), `metadata` (RFC 8414 document).

mod api;
mod authorize;
mod book;
mod client_auth;
mod codes;
mod invoices;
mod metadata;
mod oauth_error;
mod pages;
mod params;
mod scope;
mod token;
mod write;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

use crate::seal::{Purpose, Sealer};

/// The demo client's id.
pub const DEMO_CLIENT_ID: &str = "grantry-demo";
/// The demo client's secret. **Not a secret**: the demo provider is local and public, and this
/// value is in the source; it exists so the client authentication path is exercised for real.
pub const DEMO_CLIENT_SECRET: &str = "grantry-demo-secret";
/// The user a consent page proposes, and the one `auto_approve` signs in as.
pub(crate) const DEMO_DEFAULT_USER: &str = "demo-user";
/// Default lifetime of a demo access token, in seconds.
pub(crate) const DEFAULT_ACCESS_TOKEN_TTL_SECS: i64 = 3600;
/// The one scope the demo API knows.
pub const DEMO_SCOPE: &str = "invoices:read";
/// The demo's scope for creating and voiding invoices.
pub(crate) const DEMO_WRITE_SCOPE: &str = "invoices:write";

/// Largest request body the demo accepts (forms are a few hundred bytes).
const MAX_BODY_BYTES: usize = 16 * 1024;

/// How the demo provider is set up.
#[derive(Clone)]
pub struct DemoConfig {
    /// The issuer: public URL + `/demo`, no trailing slash (e.g. `http://127.0.0.1:8080/demo`).
    pub issuer: String,
    /// The one registered client (normally [`DEMO_CLIENT_ID`]).
    pub client_id: String,
    /// Its secret (normally [`DEMO_CLIENT_SECRET`]).
    pub client_secret: String,
    /// Exact-match allow-list of redirect URIs.
    pub redirect_uris: Vec<String>,
    /// Lifetime of access tokens, in seconds.
    pub access_token_ttl_secs: i64,
    /// Skip the consent page and approve for [`DEMO_DEFAULT_USER`] at once (benchmarks).
    pub auto_approve: bool,
}

impl DemoConfig {
    /// The usual configuration: the demo client and secret, a one-hour access token, consent
    /// page shown.
    pub fn new(issuer: impl Into<String>, redirect_uris: Vec<String>) -> Self {
        Self {
            issuer: issuer.into(),
            client_id: DEMO_CLIENT_ID.to_owned(),
            client_secret: DEMO_CLIENT_SECRET.to_owned(),
            redirect_uris,
            access_token_ttl_secs: DEFAULT_ACCESS_TOKEN_TTL_SECS,
            auto_approve: false,
        }
    }
}

// By hand so that a non-default secret never reaches a log through `{:?}`.
impl fmt::Debug for DemoConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DemoConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("redirect_uris", &self.redirect_uris)
            .field("access_token_ttl_secs", &self.access_token_ttl_secs)
            .field("auto_approve", &self.auto_approve)
            .finish()
    }
}

/// Counters of what the demo provider has done since start (for tests, benchmarks, metrics).
#[derive(Clone, Copy, Debug, Default, serde::Serialize, PartialEq, Eq)]
pub(crate) struct DemoStats {
    /// `GET /authorize` requests, valid or not.
    pub(crate) authorize_requests: u64,
    /// Authorization codes handed out.
    pub(crate) codes_issued: u64,
    /// `POST /token` requests, any outcome.
    pub(crate) token_requests: u64,
    /// Codes redeemed for tokens.
    pub(crate) code_redemptions_ok: u64,
    /// Refresh grants that produced a new access token.
    pub(crate) refreshes_ok: u64,
    /// Billing API requests, any outcome.
    pub(crate) api_requests: u64,
    /// Invoices created (a repeated idempotency key creates none).
    pub(crate) invoices_created: u64,
    /// Created invoices kept now (bounded: see `book`).
    pub(crate) invoices_kept: u64,
    /// Users whose writes are kept now.
    pub(crate) users_kept: u64,
    /// Redeemed codes remembered now (each for about a minute).
    pub(crate) codes_remembered: u64,
}

#[derive(Default)]
struct Counters {
    authorize_requests: AtomicU64,
    codes_issued: AtomicU64,
    token_requests: AtomicU64,
    code_redemptions_ok: AtomicU64,
    refreshes_ok: AtomicU64,
    api_requests: AtomicU64,
    invoices_created: AtomicU64,
}

/// Bumps one counter. Relaxed: the counters are independent tallies, not synchronization.
fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// What every handler shares.
struct Inner {
    config: DemoConfig,
    sealer: Arc<Sealer>,
    /// Digest of the configured client secret, compared in constant time with the digest of
    /// the presented one (digests have equal length, so the length check leaks nothing).
    client_secret_digest: String,
    consumed_codes: Mutex<codes::ConsumedCodes>,
    counters: Counters,
    book: book::Book,
}

impl Inner {
    /// Associated-data binding for every demo value: the issuer, so a code or token of one
    /// demo deployment never opens at another even under the same key and audience.
    fn binding(&self) -> &[u8] {
        self.config.issuer.as_bytes()
    }

    fn seal<T: serde::Serialize>(&self, purpose: Purpose, value: &T, ttl_secs: i64) -> String {
        self.sealer
            .seal_timed(purpose, self.binding(), value, now(), ttl_secs)
    }

    fn open<T: serde::de::DeserializeOwned>(
        &self,
        purpose: Purpose,
        sealed: &str,
    ) -> Result<T, crate::seal::OpenError> {
        self.sealer
            .open_timed(purpose, self.binding(), sealed, now())
    }
}

type Shared = Arc<Inner>;

/// The demo provider. Cheap to clone.
#[derive(Clone)]
pub struct DemoProvider {
    inner: Shared,
}

impl fmt::Debug for DemoProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DemoProvider")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl DemoProvider {
    /// A demo provider sealing its codes and tokens with `sealer`.
    pub fn new(mut config: DemoConfig, sealer: Arc<Sealer>) -> Self {
        // The issuer is compared byte for byte by clients (RFC 9207); one spelling only.
        while config.issuer.ends_with('/') {
            config.issuer.pop();
        }
        let client_secret_digest = client_auth::secret_digest(&config.client_secret);
        Self {
            inner: Arc::new(Inner {
                config,
                sealer,
                client_secret_digest,
                consumed_codes: Mutex::new(codes::ConsumedCodes::default()),
                counters: Counters::default(),
                book: book::Book::default(),
            }),
        }
    }

    /// The RFC 8414 metadata document, as `/demo/.well-known/oauth-authorization-server`
    /// serves it: what the tests compare the served one with.
    #[cfg(test)]
    pub(crate) fn metadata(&self) -> serde_json::Value {
        metadata::document(&self.inner.config.issuer)
    }

    /// The routes, relative to `/demo` (the main app nests them there).
    pub fn router(&self) -> Router {
        Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(metadata::metadata),
            )
            .route("/authorize", get(authorize::show).post(authorize::decide))
            .route("/token", post(token::token))
            .route("/revoke", post(token::revoke))
            .route(
                "/api/invoices",
                get(api::list_invoices).post(write::create_invoice),
            )
            .route("/api/me", get(api::me))
            .route("/api/invoices/{id}", get(write::get_invoice))
            .route("/api/invoices/{id}/void", post(write::void_invoice))
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            .with_state(self.inner.clone())
    }

    /// A snapshot of the counters.
    pub(crate) fn stats(&self) -> DemoStats {
        let c = &self.inner.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (kept_invoices, kept_users) = self.inner.book.kept();
        DemoStats {
            authorize_requests: load(&c.authorize_requests),
            codes_issued: load(&c.codes_issued),
            token_requests: load(&c.token_requests),
            code_redemptions_ok: load(&c.code_redemptions_ok),
            refreshes_ok: load(&c.refreshes_ok),
            api_requests: load(&c.api_requests),
            invoices_created: load(&c.invoices_created),
            invoices_kept: kept_invoices as u64,
            users_kept: kept_users as u64,
            codes_remembered: self
                .inner
                .consumed_codes
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .len() as u64,
        }
    }
}

/// The current unix time in seconds (what the sealer's timed values use).
fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
