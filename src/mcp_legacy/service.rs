//! rmcp's `/mcp` service for the legacy era, built once: its handler ([`McpHandler`]), its
//! sessions in memory (recorded in the store by [`crate::mcp_legacy::Sessions`]), and its settings, the
//! same hosts and origins as the modern era's.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::mcp_legacy::McpHandler;
use crate::mcp_legacy::sessions::Sessions;
use crate::mcp_wire::describe::MAX_REQUEST_BYTES;
use crate::server::hosts::AllowedHosts;

/// rmcp's sessions in this process's memory.
pub(crate) type Memory = LocalSessionManager;

/// What rmcp's service is set up with besides its handler and sessions.
pub(crate) struct Settings<'a> {
    pub(crate) hosts: &'a AllowedHosts,
    pub(crate) origins: &'a [String],
    /// The interval between SSE comments on its streams.
    pub(crate) keep_alive: Duration,
}

/// rmcp's service, shared by every legacy request.
pub(crate) struct Service(StreamableHttpService<McpHandler, Memory>);

impl Service {
    pub(crate) fn new(
        handler: McpHandler,
        memory: Arc<Memory>,
        sessions: &Sessions,
        settings: &Settings<'_>,
    ) -> Self {
        Self(StreamableHttpService::new(
            crate::mcp_legacy::handler::factory(handler),
            memory,
            config(sessions, settings),
        ))
    }

    /// rmcp's answer to `request`, as it gives it.
    pub(crate) async fn handle(&self, request: Request) -> Response {
        self.0.handle(request).await.map(Body::new)
    }
}

/// rmcp's settings: sessions kept in the store, the modern era's hosts and origins.
fn config(sessions: &Sessions, settings: &Settings<'_>) -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default()
        // `initialize` opens a legacy-era session; modern requests never reach rmcp.
        .with_legacy_session_mode(true)
        .with_json_response(true)
        .with_allowed_hosts(settings.hosts.spelled().to_vec())
        .with_allowed_origins(settings.origins.to_vec())
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_REQUEST_BYTES)
        .with_sse_keep_alive(Some(settings.keep_alive));
    config.session_store = Some(sessions.for_rmcp());
    config
}

/// rmcp's in-memory sessions. One ends after a while with no traffic (a restore from the
/// store brings it back); that while must outlast a question waiting for its answer.
pub(crate) fn memory(elicitation_timeout: Duration) -> Arc<Memory> {
    let mut manager = LocalSessionManager::default();
    let idle = manager
        .session_config
        .keep_alive
        .unwrap_or(Duration::MAX)
        .max(elicitation_timeout + Duration::from_secs(60));
    manager.session_config.keep_alive = Some(idle);
    Arc::new(manager)
}
