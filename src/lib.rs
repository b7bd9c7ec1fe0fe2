//! grantry: a URL-mode OAuth connector for MCP.
//!
//! One service hosts MCP tools (`list_invoices`) and the browser routes behind them. When a
//! tool needs an account the caller has not connected, the `tools/call` is answered with an
//! `input_required` result holding a URL-mode elicitation to grantry's own connect page and a
//! sealed `requestState`; the browser signs in at the provider (authorization code + PKCE);
//! the callback stores the grant; the client's retry completes.
//!
//! Map, by layer: a module uses modules of its own layer or below, never above, and no files
//! form an import cycle (`tests/architecture.rs` checks both). Top first:
//!
//! | layer | module | what it owns |
//! |---|---|---|
//! | routes | this file | `app(state, extension)`: every route, the store cleanup |
//! | | [`program`] | `grantry serve` around the library: settings, logs, the listener until a signal; the `grantry` command line (`program::commands`: keys, migrate, events, the operators' commands), of which the binary is only the `main` |
//! | composition | [`startup`] | everything composed once: the store's backends, the key ring, the catalog, the identity, the limiter, into the [`state::AppState`] |
//! | | [`admin`] | the operators' commands on connections and people: list, revoke, erase a person |
//! | protocols | [`mcp`] | the endpoint: `POST /mcp` (authentication, scopes per tool, Protected Resource Metadata); the 2026-07-28 era served by grantry itself, each request read once into an answer or one typed call (the envelope, `_meta`, the routing headers); slow answers held as SSE; the Tasks extension's methods |
//! | legacy era | [`mcp_legacy`] | the 2025-11-25 era on rmcp, the one room that names it: `initialize`, sessions in the store, `-32042`, questions asked mid-call |
//! | calls | [`mcp_calls`] | a `tools/call` of either era as one typed value, and its one dispatch: the sign-in rounds (URL mode), form and confirmation rounds (form mode), the Tasks extension (a round as a durable task its client polls), the registry with its one extension point, for tools a build adds, the connect card (MCP Apps) |
//! | pages, wire | [`connect`] | `/connect/{ticket}`, `/login/callback`, `/oauth/callback`, the pages; `/connections`, where a person sees, reconnects and disconnects what they connected |
//! | | [`mcp_wire`] | the MCP wire both eras share: JSON-RPC messages and errors, malformed bodies, header names, what grantry says of itself, what a client declares, notifications, request spans |
//! | tools | [`tools`] | the tools themselves, free of JSON-RPC, worded for the model; each call's arguments read once into its tool's own type (`tools::Arguments`) |
//! | shared state | [`state`] | the shared state, as the program assembles it and the few handlers that need most of it see it; a tool gets only its share (`tools::Services`), the rounds theirs (`mcp_calls::rounds::Rounds`), the pages theirs (`connect::services`) |
//! | | [`server`] | the HTTP listener: connection caps (total, per address), header, body and idle deadlines, the `Host` names it answers to, the open-file limit |
//! | services | [`connections`] | the connections service, built once from explicit parts, between the protocols and the stores: which grant a request means (a typed choice), the provider call made with a usable token (refreshed once across replicas), every change of a connection's life written with its event, the keep-alive scheduler, a confirmed disconnect with its revocation |
//! | data | [`flows`] | sign-in attempts, consumed exactly once (SQL and Redis backends); "a sign-in ended here" for what waits on one |
//! | | [`grants`] | users' tokens as stored: sealed at rest, versioned, each write with its events in one store write; connection health; the keep-alive's due rows; key rotation; "grant landed" events, across replicas by PostgreSQL `LISTEN/NOTIFY` or Redis pub/sub |
//! | | [`outbox`] | the transactional outbox: lifecycle events per webhook endpoint, claimed by one replica, signed (Standard Webhooks) and delivered with retries, each endpoint on its own; what waits is capped per endpoint |
//! | | [`leases`] | exclusive leases in the store (single-flight refresh across replicas, single-use marks) |
//! | | [`limits`] | rate limits counted in the store, shared by the replicas |
//! | | [`sessions`] | legacy-era (2025-11-25) MCP sessions in the store, bound to their opener, so any replica serves them; a bounded number per opener |
//! | | [`audit`] | audit events: hashed ids, never a secret |
//! | | [`tasks`] | MCP tasks (the Tasks extension) as stored: under the hash of their id, bound to their principal, each change a compare-and-set on their version; swept when their time to live ends |
//! | | [`replicas`] | the replicas serving one store, each as it records itself (public URL, keys, listen address), refreshed while it runs; the rule a starting replica must agree with the live ones by |
//! | | [`blocklist`] | the MCP clients an operator refused the use of connections to, re-read by each replica every few seconds |
//! | identity | [`identity`] | who is calling: the principal `(issuer, subject)`, whether a person is behind its token, and the token's scopes; `dev`, or `oidc` (bearer tokens, browser login, session cookie) |
//! | settings | [`config`] | every option declared once (flag, variable, TOML key, default), typed and checked at start |
//! | providers | [`providers`] | the catalog (built-in billing providers), the OAuth client, revocation, one invoice adapter per provider API; provider ids |
//! | demo | [`demo`] | the built-in demo provider (OAuth server + billing API) under `/demo` |
//! | store | [`store`] | the store's foundations: its URL, its error, the SQLite/PostgreSQL pools with their migrations, the Redis connection, durability checks at start |
//! | leaves | [`seal`] | XChaCha20-Poly1305 sealing with a key ring, purposes and an audience |
//! | | [`ids`] | the ids values carry, typed: a provider's |
//! | | [`access`] | what a call does with a person's accounts (read, write, manage): what MCP scopes and provider scopes are chosen by |
//! | | [`quota`] | a pool with a total and a per-owner share (connections per address, held retries per principal) |
//! | | [`metrics`] | Prometheus counters and histograms on `/metrics`; no personal data in labels |
//! | | [`telemetry`] | OpenTelemetry traces: spans made with the SDK, the request's carried with the work that serves it as its children's parent; the OTLP export; the caller's trace context continued and passed on to providers |
//! | | [`cookie`] | cookie names and attributes |
//! | | [`ui`] | what a person reads: grantry's words in their language (Fluent catalogs under `locales/`), the deployment's brand |
//!
//! Beside this crate in the workspace: `grantry-bridge` (`crates/grantry-bridge`, the local
//! stdio MCP server that `grantry bridge` runs for clients that cannot sign in by themselves;
//! this crate serves its Client ID Metadata Document); `grantry-base` (`crates/grantry-base`:
//! the clock, private files, loopback names, random ids), which both stand on; and
//! `grantry-conformance` (`tests/conformance/fixtures`: grantry with the conformance suite's
//! fixture tools, plugged in through [`mcp_calls::extension`]).
//!
//! Test builds add `tests` (`src/tests`): the store suite, one set of tests run against every
//! backend on a real server, inside the crate because the backend traits it tests are the
//! crate's own.

#![forbid(unsafe_code)]

pub(crate) mod access;
pub(crate) mod admin;
pub(crate) mod audit;
pub(crate) mod blocklist;
pub mod config;
pub mod connect;
pub mod connections;
pub(crate) mod cookie;
pub mod demo;
pub mod flows;
pub mod grants;
pub mod identity;
pub mod ids;
pub(crate) mod leases;
pub mod limits;
pub(crate) mod mcp;
pub mod mcp_calls;
pub mod mcp_legacy;
pub(crate) mod mcp_wire;
pub(crate) mod metrics;
pub mod outbox;
pub mod program;
pub mod providers;
pub(crate) mod quota;
pub mod replicas;
pub mod seal;
pub(crate) mod server;
pub mod sessions;
pub mod startup;
pub(crate) mod state;
pub mod store;
pub mod tasks;
pub(crate) mod telemetry;
pub(crate) mod tools;
pub(crate) mod ui;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{Request, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use tower_http::trace::TraceLayer;

use crate::server::hosts::AllowedHosts;
use crate::state::AppState;
use grantry_base::clock::unix_now;

/// Every route grantry serves, with the tools `extension` adds beside its own (the
/// conformance suite's fixtures; see [`mcp_calls::extension`]).
pub fn app(state: AppState, extension: mcp_calls::extension::Extension) -> Router {
    let mut browser = Router::new()
        .merge(connect::router(&state))
        .route("/assets/grantry.css", get(stylesheet))
        .route("/assets/brand-logo", get(brand_logo));
    if let Some(demo) = &state.demo {
        // The demo's counters are served too: they let tests (and curious users) see that a
        // refused callback made no token request.
        let stats = demo.clone();
        let demo_routes = demo
            .router()
            .route(
                "/stats",
                get(move || async move { axum::Json(stats.stats()) }),
            )
            // Anyone can use the demo (its client secret is public): it is limited per address.
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                limit_demo,
            ));
        browser = browser.nest("/demo", demo_routes.with_state(()));
    }
    // A browser page answers only under grantry's own names (DNS rebinding); `/mcp` checks
    // the same list itself, probes and metrics none.
    let hosts = Arc::new(AllowedHosts::for_config(&state.config));
    let browser = browser.layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let hosts = hosts.clone();
            async move { only_own_host(&hosts, request, next).await }
        },
    ));
    Router::new()
        .merge(mcp::router(state.clone(), extension))
        .merge(browser)
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(ready))
        .route("/metrics", get(serve_metrics))
        .route(grantry_bridge::CLIENT_METADATA_PATH, get(bridge_client_metadata))
        .layer(
            // Spans carry the path only: query strings (codes, state) never reach the log. At
            // debug level: a span per request costs more than some whole requests.
            TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
                tracing::debug_span!("http", method = %req.method(), path = %loggable_path(req.uri().path()))
            }),
        )
        .with_state(state)
}

/// A request for a browser page under a name that is not grantry's gets 421, and changes
/// nothing: it comes from a page that rebound its own name to grantry's address.
async fn only_own_host(
    hosts: &AllowedHosts,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if hosts.allows_request(request.headers(), request.uri()) {
        return next.run(request).await;
    }
    tracing::warn!(
        path = %loggable_path(request.uri().path()),
        "browser request under a foreign Host refused (possible DNS rebinding)"
    );
    (
        StatusCode::MISDIRECTED_REQUEST,
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        "Misdirected Request: this page is served only under grantry's own address \
         (its public URL)",
    )
        .into_response()
}

/// The per-address limit on `/demo` (429 with `Retry-After` beyond it).
async fn limit_demo(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let address = limits::client_address(&request, &state.config.limits.trusted_proxies);
    match state
        .limiter
        .admit_address(limits::Bucket::DemoAddress, address)
    {
        Ok(()) => next.run(request).await,
        Err(retry) => (
            StatusCode::TOO_MANY_REQUESTS,
            [(axum::http::header::RETRY_AFTER, retry.0.to_string())],
            axum::Json(serde_json::json!({"error": "rate_limited"})),
        )
            .into_response(),
    }
}

/// The request path as logs may show it: a connect link's sealed ticket is left out.
fn loggable_path(path: &str) -> &str {
    if path.starts_with("/connect/") {
        "/connect/{ticket}"
    } else {
        path
    }
}

/// How long a value this replica could not open keeps it out of service: a balancer stops
/// sending it requests it would fail, and it comes back once none has been met for this long.
const UNOPENABLE_WINDOW: Duration = Duration::from_secs(60);

/// Ready: the store answers, this replica agrees with the live ones, and nothing it met in
/// the store lately was sealed under a key another live replica holds and it lacks (a key
/// every replica has retired is no reason to take this one out: all would go).
async fn ready(State(state): State<AppState>) -> (StatusCode, String) {
    if let Err(e) = state.flows.ping().await {
        tracing::warn!(error = %e, "not ready");
        return (StatusCode::SERVICE_UNAVAILABLE, "store unavailable".into());
    }
    let Some(membership) = state.membership.get() else {
        return (StatusCode::OK, "ready".into());
    };
    if let Some(why) = membership.disagreement() {
        return (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n"));
    }
    let unopenable = state.sealer.unopenable_key_within(UNOPENABLE_WINDOW);
    if let Some(key_id) = unopenable.filter(|key| membership.a_peer_holds(key)) {
        tracing::warn!(
            key_id,
            "not ready: the store holds values this replica cannot open"
        );
        let said = format!(
            "cannot open what the store holds: values sealed under key {key_id}, which another \
             replica holds and this replica's key ring (GRANTRY_KEYS) lacks\n"
        );
        return (StatusCode::SERVICE_UNAVAILABLE, said);
    }
    (StatusCode::OK, "ready".into())
}

async fn serve_metrics(State(state): State<AppState>) -> impl IntoResponse {
    metrics::render(state.metrics.clone()).await
}

/// The bridge's Client ID Metadata Document, for authorization servers that take such
/// documents (`grantry bridge --client-metadata-url`). Fetched by servers, not browsers.
async fn bridge_client_metadata(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(CACHE_CONTROL, "public, max-age=3600")],
        axum::Json(grantry_bridge::client_metadata_document(
            state.config.public_url.as_url().as_str(),
        )),
    )
}

/// grantry's stylesheet, with the brand's colour after it.
async fn stylesheet(State(state): State<AppState>) -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=3600"),
        ],
        format!(
            "{}{}",
            include_str!("../assets/grantry.css"),
            state.config.brand.stylesheet()
        ),
    )
}

/// The `--brand-logo`, as read at start. An SVG opened on its own runs nothing: the
/// response's policy forbids scripts and sandboxes it.
async fn brand_logo(State(state): State<AppState>) -> axum::response::Response {
    let Some(logo) = &state.config.brand.logo else {
        return StatusCode::NOT_FOUND.into_response();
    };
    (
        [
            (CONTENT_TYPE, logo.content_type),
            (CACHE_CONTROL, "public, max-age=3600"),
            (
                axum::http::header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; sandbox",
            ),
            (axum::http::header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        axum::body::Bytes::from(logo.bytes.to_vec()),
    )
        .into_response()
}

/// Removes flows long past their expiry, expired legacy sessions, lapsed leases and tasks past
/// their time to live, every few minutes, for as long as the process runs.
pub(crate) fn spawn_store_cleanup(state: AppState) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(300));
        loop {
            tick.tick().await;
            let flows = state
                .flows
                .delete_expired(unix_now() - flows::FLOW_RETENTION_SECS)
                .await;
            report_cleanup("flows", flows);
            report_cleanup("legacy sessions", state.sessions.delete_expired().await);
            report_cleanup("leases", state.leases.delete_expired().await);
            let tasks = state
                .tasks
                .delete_expired(grantry_base::clock::unix_now_millis())
                .await;
            if let Ok(swept) = tasks {
                metrics::task("expired", swept);
            }
            report_cleanup("tasks", tasks);
            let delivered_before = unix_now() - outbox::DELIVERED_RETENTION_SECS;
            report_cleanup(
                "delivered webhook events",
                state.outbox.prune_delivered(delivered_before).await,
            );
        }
    });
}

fn report_cleanup(what: &str, removed: Result<u64, store::StoreError>) {
    match removed {
        Ok(0) => {}
        Ok(n) => tracing::info!(removed = n, "expired {what} removed"),
        Err(e) => tracing::warn!(error = %e, "cleanup of expired {what} failed"),
    }
}
