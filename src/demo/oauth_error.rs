//! OAuth error responses of the token and revocation endpoints (RFC 6749 §5.2).
//!
//! One type so every refusal has the same JSON shape and headers: `{"error", "error_description"}`,
//! `Cache-Control: no-store`, and for `invalid_client` a 401 with a Basic challenge.

use std::borrow::Cow;

use axum::Json;
use axum::http::header::{CACHE_CONTROL, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A refusal from `/token` or `/revoke`. The description names parameters, never their values.
#[derive(Debug)]
pub(super) struct OAuthError {
    pub(crate) code: &'static str,
    pub(crate) description: Cow<'static, str>,
}

impl OAuthError {
    pub(super) fn invalid_request(description: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code: "invalid_request",
            description: description.into(),
        }
    }

    pub(super) fn invalid_client(description: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code: "invalid_client",
            description: description.into(),
        }
    }

    pub(super) fn invalid_grant(description: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code: "invalid_grant",
            description: description.into(),
        }
    }

    pub(super) fn invalid_scope(description: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code: "invalid_scope",
            description: description.into(),
        }
    }

    pub(super) fn unsupported_grant_type() -> Self {
        Self {
            code: "unsupported_grant_type",
            description: "grant_type must be authorization_code or refresh_token".into(),
        }
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let status = if self.code == "invalid_client" {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::BAD_REQUEST
        };
        let body = Json(json!({ "error": self.code, "error_description": self.description }));
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if status == StatusCode::UNAUTHORIZED {
            // RFC 6749 §5.2: a 401 names the authentication scheme the client should use.
            headers.insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"grantry-demo\""),
            );
        }
        response
    }
}
