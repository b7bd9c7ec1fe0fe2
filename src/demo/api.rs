//! The demo billing API: `GET /api/invoices?status=open|paid|all` with a bearer access token,
//! and `GET /api/me` (whose account the token reaches).
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
    match invoices_of(&inner, &headers, query.as_deref()) {
        Ok(list) => {
            let mut response = Json(json!({ "invoices": list })).into_response();
            // Per-user data: no shared cache may keep it.
            response
                .headers_mut()
                .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(err) => err.into_response(),
    }
}

/// `GET /api/me`: whom the token speaks for, the user named at the consent page. Each user
/// is an account of the demo, as a company is at a real provider.
pub(super) async fn me(State(inner): State<Shared>, headers: HeaderMap) -> Response {
    bump(&inner.counters.api_requests);
    match authenticate(&inner, &headers) {
        Ok(claims) => {
            let mut response = Json(json!({ "user": claims.user })).into_response();
            response
                .headers_mut()
                .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(err) => err.into_response(),
    }
}

/// Why an API request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ApiError {
    /// No `Authorization` header at all.
    NoToken,
    /// A token that is not a valid, unexpired demo access token (or not a Bearer header).
    BadToken,
    /// A valid token without `invoices:read`.
    InsufficientScope,
    /// `status` other than `open`, `paid` or `all`.
    InvalidStatus,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, challenge) = match self {
            // RFC 6750 §3.1: a request without credentials gets a challenge but no error code.
            ApiError::NoToken => (
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                Some("Bearer realm=\"grantry-demo\""),
            ),
            ApiError::BadToken => (
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                Some("Bearer error=\"invalid_token\""),
            ),
            ApiError::InsufficientScope => (
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                Some("Bearer error=\"insufficient_scope\", scope=\"invoices:read\""),
            ),
            ApiError::InvalidStatus => (StatusCode::BAD_REQUEST, "invalid_status", None),
        };
        let mut response = (status, Json(json!({ "error": code }))).into_response();
        if let Some(challenge) = challenge {
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        }
        response
    }
}

/// The invoices the request may see, filtered by `status`.
fn invoices_of(
    inner: &Inner,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Vec<invoices::DemoInvoice>, ApiError> {
    let claims = authenticate(inner, headers)?;
    if !claims.scope.split(' ').any(|s| s == DEMO_SCOPE) {
        return Err(ApiError::InsufficientScope);
    }
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let wanted = match params.get("status") {
        Ok(None | Some("all")) => None,
        Ok(Some(status @ ("open" | "paid"))) => Some(status),
        _ => return Err(ApiError::InvalidStatus),
    };
    Ok(inner
        .book
        .invoices(&claims.user)
        .into_iter()
        .filter(|inv| wanted.is_none_or(|w| inv.state == w))
        .collect())
}

/// The claims of the request's access token.
pub(super) fn authenticate(inner: &Inner, headers: &HeaderMap) -> Result<TokenClaims, ApiError> {
    let value = headers.get(AUTHORIZATION).ok_or(ApiError::NoToken)?;
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .ok_or(ApiError::BadToken)?;
    inner
        .open::<TokenClaims>(Purpose::DemoAccessToken, token)
        .map_err(|err| {
            tracing::info!(reason = %err, "demo: API request with an unusable access token");
            ApiError::BadToken
        })
}
