//! The RFC 8414 authorization server metadata document.
//!
//! grantry's OAuth client (and anyone else) can discover every endpoint of the demo from it,
//! exactly as with a real provider.

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use super::{DEMO_SCOPE, DEMO_WRITE_SCOPE, Shared};

/// `GET /.well-known/oauth-authorization-server`.
pub(super) async fn metadata(State(inner): State<Shared>) -> Json<Value> {
    Json(document(&inner.config.issuer))
}

/// The metadata for `issuer` (no trailing slash).
pub(super) fn document(issuer: &str) -> Value {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "revocation_endpoint": format!("{issuer}/revoke"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "authorization_response_iss_parameter_supported": true,
        "scopes_supported": [DEMO_SCOPE, DEMO_WRITE_SCOPE],
    })
}
