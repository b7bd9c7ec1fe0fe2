//! The token endpoint (`authorization_code` and `refresh_token` grants) and revocation.
//!
//! Every request authenticates the client first (`client_auth`). A code is checked in full
//! (seal, expiry, client, redirect URI, PKCE verifier) and only then marked used, so a failed
//! attempt, e.g. by someone who saw the code but lacks the verifier, cannot burn it for the
//! rightful client. Tokens are sealed claims: nothing is stored, which is also why revocation
//! can only be acknowledged, not enforced.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, PRAGMA};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::codes::{self, CodeClaims, REFRESH_TOKEN_TTL_SECS, TokenClaims};
use super::oauth_error::OAuthError;
use super::params::{Params, is_form};
use super::{Inner, Shared, bump, client_auth, now, scope};
use crate::seal::{self, OpenError, Purpose};

/// A successful token response (RFC 6749 §5.1).
#[derive(Serialize)]
struct TokenResponse {
    access_token: String,
    token_type: &'static str,
    expires_in: i64,
    refresh_token: String,
    scope: String,
}

/// `POST /token`.
pub(super) async fn token(
    State(inner): State<Shared>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    bump(&inner.counters.token_requests);
    match grant(&inner, &headers, &body) {
        Ok(tokens) => {
            let mut response = Json(tokens).into_response();
            no_store(&mut response);
            response
        }
        Err(err) => {
            tracing::info!(error = err.code, reason = %err.description, "demo: token request refused");
            err.into_response()
        }
    }
}

/// `POST /revoke` (RFC 7009). Demo tokens are stateless sealed values, so there is nothing to
/// revoke: a well-formed, authenticated request is acknowledged with 200 (as RFC 7009 §2.2 also
/// does for unknown tokens) and the token stays valid until it expires.
pub(super) async fn revoke(
    State(inner): State<Shared>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let result = check_revocation(&inner, &headers, &body);
    match result {
        Ok(()) => {
            tracing::info!(
                "demo: revocation acknowledged (stateless tokens stay valid until expiry)"
            );
            let mut response = StatusCode::OK.into_response();
            no_store(&mut response);
            response
        }
        Err(err) => {
            tracing::info!(error = err.code, reason = %err.description, "demo: revocation refused");
            err.into_response()
        }
    }
}

/// Everything RFC 7009 asks of a revocation request; there is nothing to do afterwards.
fn check_revocation(inner: &Inner, headers: &HeaderMap, body: &[u8]) -> Result<(), OAuthError> {
    let params = form_params(headers, body)?;
    client_auth::authenticate(inner, headers, &params)?;
    required(&params, "token")?;
    Ok(())
}

fn grant(inner: &Inner, headers: &HeaderMap, body: &[u8]) -> Result<TokenResponse, OAuthError> {
    let params = form_params(headers, body)?;
    let client_id = client_auth::authenticate(inner, headers, &params)?;
    match params.get("grant_type").map_err(|_| repeated())? {
        None => Err(OAuthError::invalid_request("grant_type is required")),
        Some("authorization_code") => redeem_code(inner, client_id, &params),
        Some("refresh_token") => refresh(inner, client_id, &params),
        Some(_) => Err(OAuthError::unsupported_grant_type()),
    }
}

fn redeem_code(
    inner: &Inner,
    client_id: String,
    params: &Params,
) -> Result<TokenResponse, OAuthError> {
    let claims = redeemable_code(inner, &client_id, params)?;
    // Last check, so that only a request that would otherwise succeed uses the code up.
    use_up(inner, &claims, &client_id)?;
    bump(&inner.counters.code_redemptions_ok);
    tracing::info!(
        client_id = %client_id,
        user = %claims.user,
        "demo: authorization code redeemed"
    );
    let claims = TokenClaims {
        user: claims.user,
        scope: claims.scope,
        client_id,
    };
    let refresh_token = inner.seal(Purpose::DemoRefreshToken, &claims, REFRESH_TOKEN_TTL_SECS);
    Ok(issue_access_token(inner, claims, refresh_token))
}

/// The code's claims, when it was issued to this client for this redirect URI and the
/// verifier answers its challenge.
fn redeemable_code(
    inner: &Inner,
    client_id: &str,
    params: &Params,
) -> Result<CodeClaims, OAuthError> {
    let code = required(params, "code")?;
    let redirect_uri = required(params, "redirect_uri")?;
    let verifier = required(params, "code_verifier")?;
    if !codes::is_pkce_value(verifier) {
        return Err(OAuthError::invalid_request(
            "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~",
        ));
    }
    let claims: CodeClaims = inner.open(Purpose::DemoCode, code).map_err(|err| {
        tracing::debug!(reason = %err, "demo: authorization code did not open");
        match err {
            OpenError::Expired => OAuthError::invalid_grant("the authorization code has expired"),
            _ => OAuthError::invalid_grant("the authorization code is not valid"),
        }
    })?;
    if claims.client_id != client_id {
        return Err(OAuthError::invalid_grant(
            "the authorization code was issued to another client",
        ));
    }
    if claims.redirect_uri != redirect_uri {
        return Err(OAuthError::invalid_grant(
            "redirect_uri does not match the authorization request",
        ));
    }
    if !seal::constant_time_eq(&codes::s256(verifier), &claims.code_challenge) {
        return Err(OAuthError::invalid_grant(
            "code_verifier does not match the code_challenge",
        ));
    }
    Ok(claims)
}

/// Marks the code used; a code seen before, or one past the memory's cap, is refused.
fn use_up(inner: &Inner, claims: &CodeClaims, client_id: &str) -> Result<(), OAuthError> {
    // A poisoned lock still holds a consistent set (insert and retain do not unwind halfway).
    let consumption = inner
        .consumed_codes
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .consume(&claims.id, claims.exp, now());
    match consumption {
        codes::Consumption::First => Ok(()),
        codes::Consumption::Replayed => {
            // RFC 6749 §4.1.2 asks to revoke tokens issued from a replayed code; stateless
            // demo tokens cannot be, so the replay is refused and logged.
            tracing::warn!(
                client_id = %client_id,
                "demo: authorization code presented a second time"
            );
            Err(OAuthError::invalid_grant(
                "the authorization code was already used",
            ))
        }
        codes::Consumption::Full => {
            tracing::warn!("demo: too many codes redeemed within a minute; refused");
            Err(OAuthError::invalid_grant(
                "too many codes were redeemed in the last minute; sign in again shortly",
            ))
        }
    }
}

fn refresh(inner: &Inner, client_id: String, params: &Params) -> Result<TokenResponse, OAuthError> {
    let refresh_token = required(params, "refresh_token")?;
    let claims: TokenClaims = inner
        .open(Purpose::DemoRefreshToken, refresh_token)
        .map_err(|err| {
            tracing::debug!(reason = %err, "demo: refresh token did not open");
            OAuthError::invalid_grant("the refresh token is not valid or has expired")
        })?;
    if claims.client_id != client_id {
        return Err(OAuthError::invalid_grant(
            "the refresh token was issued to another client",
        ));
    }
    let scope = match params.get("scope").map_err(|_| repeated())? {
        None => claims.scope.clone(),
        Some(requested) => scope::narrow(requested, &claims.scope).ok_or_else(|| {
            OAuthError::invalid_scope("the requested scope exceeds the scope originally granted")
        })?,
    };
    bump(&inner.counters.refreshes_ok);
    tracing::info!(
        client_id = %client_id,
        user = %claims.user,
        "demo: access token refreshed"
    );
    let access_claims = TokenClaims { scope, ..claims };
    // No rotation in the demo: the same refresh token comes back (RFC 6749 §6 allows either),
    // valid until 30 days after the code was first redeemed.
    Ok(issue_access_token(
        inner,
        access_claims,
        refresh_token.to_owned(),
    ))
}

/// A fresh access token for `claims`, returned with `refresh_token`.
fn issue_access_token(inner: &Inner, claims: TokenClaims, refresh_token: String) -> TokenResponse {
    let ttl = inner.config.access_token_ttl_secs;
    TokenResponse {
        access_token: inner.seal(Purpose::DemoAccessToken, &claims, ttl),
        token_type: "Bearer",
        expires_in: ttl.max(0),
        refresh_token,
        scope: claims.scope,
    }
}

fn form_params(headers: &HeaderMap, body: &[u8]) -> Result<Params, OAuthError> {
    if !is_form(headers) {
        return Err(OAuthError::invalid_request(
            "the body must be application/x-www-form-urlencoded",
        ));
    }
    Ok(Params::parse(body))
}

/// A required parameter (its name is in the error; its value never is).
fn required<'a>(params: &'a Params, name: &'static str) -> Result<&'a str, OAuthError> {
    match params.get(name) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(OAuthError::invalid_request(format!("{name} is required"))),
        Err(_) => Err(repeated()),
    }
}

fn repeated() -> OAuthError {
    OAuthError::invalid_request("a parameter was given more than once")
}

/// RFC 6749 §5.1: responses carrying tokens must not be cached.
fn no_store(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(PRAGMA, HeaderValue::from_static("no-cache"));
}
