//! `GET /`: a small page saying what this server is (the deployment's MCP connector), the
//! URL a person gives their assistant to use it, which accounts it connects, and a link to
//! their connections. Like every browser page: the reader's language and the brand, no
//! JavaScript, only under grantry's own names, within the per-address limit.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::pages::{self, HomePage};
use super::services::PageServices;
use crate::identity::oidc::CONNECTIONS_PATH;

pub(super) async fn show(State(state): State<PageServices>) -> Response {
    let providers: Vec<&str> = state
        .catalog
        .all()
        .map(|p| p.display_name.as_str())
        .collect();
    pages::render(
        StatusCode::OK,
        &HomePage {
            mcp_url: &state.config.mcp_url(),
            providers: &providers,
            connections: CONNECTIONS_PATH,
        },
    )
}
