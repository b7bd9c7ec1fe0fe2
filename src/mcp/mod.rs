//! MCP on `POST /mcp`, revision 2026-07-28, built on rmcp at the edge.
//!
//! rmcp serves the protocol statelessly (no sessions: any replica serves any request), and
//! the legacy 2025-11-25 era on the same endpoint for clients that start with `initialize`
//! ([`legacy`]: sessions kept in the store, so any replica serves those too);
//! `endpoint` is the route's one service: it counts the request, admits it ([`auth`]: rate
//! limits and the bearer token) and hands it to the [`edge`]. `handler` maps the protocol onto
//! grantry's tools and sign-in rounds; the edge keeps held retries alive and the wire exactly
//! as the spec writes it; `direct` answers the common well-formed requests (discover,
//! tools/list, plain tool calls) with the handler's own code, without rmcp's per-request
//! machinery (`known_meta` remembers the `_meta` texts it has checked), and leaves everything
//! else to rmcp. [`extension`] is the registry's one extension point: tools a build adds
//! beside grantry's own (the conformance suite's fixtures, in `tests/conformance/fixtures`).

mod account_choice;
mod answers;
pub(crate) mod auth;
mod capabilities;
mod confirm;
mod direct;
pub(crate) mod edge;
mod endpoint;
pub mod extension;
mod form;
mod handler;
mod headers;
mod known_meta;
pub(crate) mod legacy;
mod malformed;
mod plain_call;
pub mod request_state;
mod round_state;
pub(crate) mod sign_in;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::server::hosts::{AllowedHosts, LOOPBACK_NAMES};
use crate::state::AppState;

/// The protocol versions grantry speaks: the modern era, and the legacy one for clients that
/// start with `initialize`.
pub fn supported_versions() -> [rmcp::model::ProtocolVersion; 2] {
    use rmcp::model::ProtocolVersion;
    [ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25]
}

/// The modern revision, as its `MCP-Protocol-Version` header and `_meta` spell it.
pub const MODERN_VERSION: &str = "2026-07-28";

/// Largest request body accepted on `/mcp` (larger gets 413 before any parsing).
pub const MAX_REQUEST_BYTES: usize = 256 * 1024;

/// The `/mcp` route, with the tools `extension` adds beside grantry's own.
pub fn router(state: AppState, extension: extension::Extension) -> Router<AppState> {
    let config = &state.config;
    let hosts = AllowedHosts::for_config(config);
    let origins = allowed_origins(config);
    let memory = Arc::new(session_manager(config.elicitation_timeout));
    let sessions = legacy::Sessions::new(
        state.sessions.clone(),
        memory.clone(),
        config.max_legacy_sessions,
        config.max_legacy_sessions_per_principal,
        config.max_stored_legacy_sessions_per_principal,
    );
    let mut server_config = StreamableHttpServerConfig::default()
        // Modern requests are served statelessly whatever this says; `initialize` opens a
        // legacy-era session (see `legacy`).
        .with_legacy_session_mode(true)
        .with_json_response(true)
        .with_allowed_hosts(hosts.spelled().to_vec())
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_REQUEST_BYTES)
        .with_sse_keep_alive(Some(keep_alive_interval(config.retry_hold)));
    server_config.session_store = Some(sessions.for_rmcp());
    let handler = handler::McpHandler::new(state.clone(), extension);
    let direct = config
        .mcp_direct_path
        .then(|| Arc::new(direct::Direct::new(state.clone(), &handler, hosts)));
    let rmcp = Arc::new(StreamableHttpService::new(
        handler::factory(handler),
        memory,
        server_config,
    ));
    let endpoint = Arc::new(endpoint::Endpoint {
        edge: edge::Edge {
            direct,
            sessions,
            streams: legacy::Streams::new(state.held.clone()),
            keep_alive: keep_alive_interval(config.retry_hold),
            rmcp,
        },
        state: state.clone(),
    });
    // A service of its own rather than middleware layers: axum clones a route's layers for
    // every request, and rmcp's `Service::call` clones itself (config included) again.
    let service = tower::service_fn(move |request: axum::extract::Request| {
        let endpoint = endpoint.clone();
        async move { Ok::<_, std::convert::Infallible>(endpoint.serve(request).await) }
    });
    let mcp = Router::new().route_service("/mcp", service);
    Router::new()
        .route(auth::METADATA_PATH, get(auth::protected_resource_metadata))
        .route(
            auth::ROOT_METADATA_PATH,
            get(auth::protected_resource_metadata),
        )
        .merge(mcp)
}

/// The browser origins allowed to call `/mcp`: the public URL's, loopback spellings when
/// listening on loopback, and `--allowed-origins`.
fn allowed_origins(config: &crate::config::Config) -> Vec<String> {
    let mut origins = vec![config.public_url.origin()];
    if config.listen.ip().is_loopback() {
        // Loopback names are not a rebinding risk; let local clients use any spelling.
        let port = config.listen.port();
        for host in LOOPBACK_NAMES {
            origins.push(format!("http://{host}:{port}"));
        }
    }
    origins.extend(config.allowed_origins.iter().cloned());
    origins
}

/// rmcp's in-memory legacy sessions. One ends after a while with no traffic (a restore from
/// the store brings it back); that while must outlast a question waiting for its answer.
fn session_manager(elicitation_timeout: Duration) -> LocalSessionManager {
    let mut manager = LocalSessionManager::default();
    let idle = manager
        .session_config
        .keep_alive
        .unwrap_or(Duration::MAX)
        .max(elicitation_timeout + Duration::from_secs(60));
    manager.session_config.keep_alive = Some(idle);
    manager
}

/// SSE keep-alive interval: often enough for proxies with short idle timeouts, and several
/// times within one hold.
fn keep_alive_interval(retry_hold: Duration) -> Duration {
    (retry_hold / 4).clamp(Duration::from_secs(1), Duration::from_secs(15))
}
