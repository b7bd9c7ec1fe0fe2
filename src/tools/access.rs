//! A usable access token for (principal, provider): the stored one, refreshed first when it
//! is about to expire.
//!
//! A refresh the provider rejects (`invalid_grant` and the like) removes the grant, so the next
//! call asks the user to sign in again; a provider that is down keeps the grant and the call
//! fails with a retryable error.

use crate::clock::unix_now;
use crate::grants::{Grant, GrantKey};
use crate::providers::Provider;
use crate::providers::oauth::{self, TokenError};
use crate::state::AppState;
use crate::store::StoreError;

/// Refresh this many seconds before the access token expires.
pub const REFRESH_MARGIN_SECS: i64 = 60;

pub enum Access {
    Token(String),
    /// No grant, or it can no longer be refreshed: the user must sign in.
    SignInNeeded,
    /// The provider could not be reached to refresh; try again later.
    Unavailable(String),
}

pub async fn access_token(
    state: &AppState,
    provider: &Provider,
    key: &GrantKey,
) -> Result<Access, StoreError> {
    let Some(grant) = state.grants.get(key).await? else {
        return Ok(Access::SignInNeeded);
    };
    if grant.tokens.expires_at - REFRESH_MARGIN_SECS > unix_now() {
        return Ok(Access::Token(grant.tokens.access_token));
    }
    refresh(state, provider, key, grant).await
}

/// Refreshes `grant` and stores the result with compare-and-set on its version.
pub async fn refresh(
    state: &AppState,
    provider: &Provider,
    key: &GrantKey,
    grant: Grant,
) -> Result<Access, StoreError> {
    let Some(refresh_token) = grant.tokens.refresh_token.as_deref() else {
        state.grants.delete(key).await?;
        return Ok(Access::SignInNeeded);
    };
    let redirect_uri = state.config.redirect_uri();
    match oauth::refresh(&state.http, provider, &redirect_uri, refresh_token).await {
        Ok(tokens) => {
            let written = state
                .grants
                .replace_if_unchanged(key, grant.version, grant.created_at, &tokens, unix_now())
                .await?;
            if !written {
                // Someone else refreshed or reconnected meanwhile: theirs is the newer grant.
                return Ok(match state.grants.get(key).await? {
                    Some(newer) => Access::Token(newer.tokens.access_token),
                    None => Access::SignInNeeded,
                });
            }
            Ok(Access::Token(tokens.access_token))
        }
        Err(TokenError::Rejected(reason)) => {
            tracing::warn!(grant = %key.tag(), %reason, "refresh rejected; the user must sign in again");
            state.grants.delete(key).await?;
            Ok(Access::SignInNeeded)
        }
        Err(e) => {
            tracing::warn!(grant = %key.tag(), error = %e, "refresh failed; keeping the grant");
            Ok(Access::Unavailable(e.to_string()))
        }
    }
}
