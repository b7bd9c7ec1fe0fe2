//! The demo billing API: `GET /api/invoices?status=open|paid|all` with a bearer access token.
//!
//! The token is a sealed demo access token (RFC 6750 header form only; tokens in query strings
//! end up in logs). Errors follow RFC 6750 §3: 401 with a `WWW-Authenticate: Bearer` challenge
//! for a missing or bad token, 403 `insufficient_scope` for a token without `invoices:read`.

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::codes::TokenClaims;
use super::invoices;
use super::params::Params;
use super::{DEMO_SCOPE, Inner, Shared, bump};
use crate::seal::Purpose;

/// `GET /api/invoices`.
pub(super) async fn list_invoices(
    State(inner): State<Shared>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    bump(&inner.counters.api_requests);
    let claims = match authenticate(&inner, &headers) {
        Ok(claims) => claims,
        Err(response) => return response,
    };
    if !claims.scope.split(' ').any(|s| s == DEMO_SCOPE) {
        return error(
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            Some("Bearer error=\"insufficient_scope\", scope=\"invoices:read\""),
        );
    }
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let wanted = match params.get("status") {
        Ok(None | Some("all")) => None,
        Ok(Some(status @ ("open" | "paid"))) => Some(status),
        _ => return error(StatusCode::BAD_REQUEST, "invalid_status", None),
    };
    let list: Vec<_> = invoices::seeded(&claims.user)
        .into_iter()
        .filter(|inv| wanted.is_none_or(|w| inv.state == w))
        .collect();
    let mut response = Json(json!({ "invoices": list })).into_response();
    // Per-user data: no shared cache may keep it.
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The claims of the request's access token, or the 401 to answer with.
fn authenticate(inner: &Inner, headers: &HeaderMap) -> Result<TokenClaims, Response> {
    let Some(value) = headers.get(AUTHORIZATION) else {
        // RFC 6750 §3.1: no credentials at all gets a challenge without an error code.
        return Err(error(
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            Some("Bearer realm=\"grantry-demo\""),
        ));
    };
    let invalid = || {
        error(
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            Some("Bearer error=\"invalid_token\""),
        )
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .ok_or_else(invalid)?;
    inner
        .open::<TokenClaims>(Purpose::DemoAccessToken, token)
        .map_err(|err| {
            tracing::info!(reason = %err, "demo: API request with an unusable access token");
            invalid()
        })
}

/// A JSON error body `{"error": code}`, with a `WWW-Authenticate` challenge when given.
fn error(status: StatusCode, code: &'static str, challenge: Option<&'static str>) -> Response {
    let mut response = (status, Json(json!({ "error": code }))).into_response();
    if let Some(challenge) = challenge {
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    }
    response
}
