//! `/mcp` as one service: count, admit, answer.
//!
//! The three steps run in one future. As axum middleware they cost a boxed future and a clone
//! of every inner layer, per layer, per request: about a sixth of a `server/discover`.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::CACHE_CONTROL;
use axum::response::Response;

use crate::mcp::auth;
use crate::mcp::edge::{self, Edge};
use crate::mcp_wire::headers::MCP_METHOD;
use crate::metrics;
use crate::state::AppState;

pub(super) struct Endpoint {
    pub(crate) state: AppState,
    pub(crate) edge: Edge,
}

impl Endpoint {
    /// Answers one request to `/mcp`. Every request is counted, refusals by admission too.
    pub(super) async fn serve(self: Arc<Self>, mut request: Request) -> Response {
        let method = metrics::method_label(
            request
                .headers()
                .get(&MCP_METHOD)
                .and_then(|v| v.to_str().ok()),
        );
        let started = Instant::now();
        let mut response = match auth::admit(&self.state, &mut request).await {
            Ok(()) => self.edge.answer(request).await,
            Err(refusal) => refusal,
        };
        // An answer may hold a requestState or a sign-in link: no cache may keep it.
        response
            .headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        metrics::mcp_request(method, edge::outcome(&response), started.elapsed());
        response
    }
}
