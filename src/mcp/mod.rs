//! The endpoint: `POST /mcp` and the Protected Resource Metadata beside it, with the
//! 2026-07-28 era served by grantry itself.
//!
//! `endpoint` is the route's one service: it counts the request, admits it ([`auth`]: rate
//! limits and the bearer token) and hands it to the [`edge`], which reads the body and asks
//! [`modern`] what it is. A modern request (stateless: `_meta` on every request) is checked
//! and parsed once, into an answer or one typed call ([`crate::mcp_calls::call::ToolCall`]);
//! a legacy one (an `initialize`, a session's) goes to the legacy era on rmcp
//! ([`crate::mcp_legacy`]), whose handler builds the same typed call. Either way the calls'
//! dispatch ([`crate::mcp_calls`]) runs it. The edge holds a slow answer as SSE with
//! keep-alives ([`held`]), and answers the Tasks extension's methods.
//!
//! Why grantry owns the modern era: rmcp (the official SDK, pinned) serves it with a
//! per-request task, a transport and its own message types, from which grantry's answers had
//! to be built through JSON and mended after (an empty `elicitationId` this revision
//! removed). Served here, a request is parsed once into grantry's own types, every answer is
//! written as the spec writes it, and what a later revision or extension adds (resources,
//! tasks) is grantry's to shape. rmcp keeps the legacy era, with its sessions and its
//! mid-call questions; `tests/e2e/recorded_wire.rs` holds what rmcp answered this era before.

pub(crate) mod auth;
pub(crate) mod edge;
mod endpoint;
mod held;
mod modern;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;

use crate::mcp_calls::{apps, dispatch, extension, registry, tasks_extension};
use crate::mcp_legacy as legacy;
use crate::mcp_wire::describe;
use crate::server::hosts::{AllowedHosts, LOOPBACK_NAMES};
use crate::state::AppState;

/// The `/mcp` route, with the tools `extension` adds beside grantry's own.
pub(crate) fn router(state: AppState, extension: extension::Extension) -> Router<AppState> {
    let config = &state.config;
    let hosts = AllowedHosts::for_config(config);
    let origins = allowed_origins(config);
    let memory = legacy::memory(config.elicitation_timeout);
    let keep_alive = keep_alive_interval(config.retry_hold);
    let sessions = legacy::Sessions::new(
        state.sessions.clone(),
        memory.clone(),
        config.max_legacy_sessions,
        config.max_legacy_sessions_per_principal,
        config.max_stored_legacy_sessions_per_principal,
    );
    let added = extension.iter().flat_map(|e| e.tools()).collect();
    let registry = Arc::new(registry::Registry::new(added));
    let resources = apps::Resources::new(config);
    let dispatch = Arc::new(dispatch::Dispatch::new(state.clone(), extension, &registry));
    let handler = legacy::McpHandler::new(
        dispatch.clone(),
        registry.clone(),
        &resources,
        config.max_held_retries,
    );
    let settings = legacy::Settings {
        hosts: &hosts,
        origins: &origins,
        keep_alive,
    };
    let legacy = legacy::Service::new(handler, memory, &sessions, &settings);
    let tool_scopes = auth::ToolScopeCheck::new(&state).map(|check| (check, registry.clone()));
    let modern = modern::Modern::new(
        hosts,
        modern::AllowedOrigins::new(&origins),
        registry,
        &resources,
        &describe::discovery(),
    );
    let tasks = tasks_extension::Tasks::start(state.clone(), dispatch.clone());
    let endpoint = Arc::new(endpoint::Endpoint {
        edge: edge::Edge {
            modern,
            dispatch,
            tasks,
            sessions,
            streams: legacy::Streams::new(state.held.clone()),
            keep_alive,
            legacy: Arc::new(legacy),
            tool_scopes,
        },
        state: state.clone(),
    });
    routes(endpoint)
}

/// `/mcp` served by `endpoint`, and the Protected Resource Metadata beside it.
fn routes(endpoint: Arc<endpoint::Endpoint>) -> Router<AppState> {
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

/// SSE keep-alive interval: often enough for proxies with short idle timeouts, and several
/// times within one hold.
fn keep_alive_interval(retry_hold: Duration) -> Duration {
    (retry_hold / 4).clamp(Duration::from_secs(1), Duration::from_secs(15))
}
