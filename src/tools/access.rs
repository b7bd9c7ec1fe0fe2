//! A usable access token for (principal, provider): the stored one, refreshed first when it
//! is about to expire.
//!
//! Only `invalid_grant` (the refresh token is dead) removes a grant, and only if nobody
//! refreshed or reconnected it meanwhile, so a lost race never disconnects a user. Other
//! refusals (`invalid_client`: grantry's own credentials) and outages keep the grant and fail
//! the call with a retryable error.

use crate::clock::unix_now;
use crate::grants::{Grant, GrantKey};
use crate::providers::{Account, Provider};
use crate::providers::oauth::{self, TokenError};
use crate::state::AppState;
use crate::store::StoreError;

/// Refresh this many seconds before the access token expires.
pub const REFRESH_MARGIN_SECS: i64 = 60;

pub enum Access {
    /// A token to use, the account it is for, and the version of the grant it came from.
    Token {
        token: String,
        account: Option<Account>,
        version: i64,
    },
    /// No grant, or it can no longer be refreshed: the user must sign in.
    SignInNeeded,
    /// The provider could not be reached, or refused grantry itself; try again later.
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
        return Ok(Access::Token {
            token: grant.tokens.access_token,
            account: grant.tokens.account,
            version: grant.version,
        });
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
        return forget(state, key, grant.version).await;
    };
    let redirect_uri = state.config.redirect_uri();
    match oauth::refresh(&state.http, provider, &redirect_uri, refresh_token).await {
        Ok(mut tokens) => {
            tokens.account = grant.tokens.account.clone();
            let written = state
                .grants
                .replace_if_unchanged(key, grant.version, grant.created_at, &tokens, unix_now())
                .await?;
            if !written {
                return newer(state, key).await;
            }
            Ok(Access::Token {
                token: tokens.access_token,
                account: tokens.account,
                version: grant.version + 1,
            })
        }
        Err(TokenError::Rejected(reason)) if reason == "invalid_grant" => {
            tracing::warn!(grant = %key.tag(), "refresh token rejected; the user must sign in again");
            forget(state, key, grant.version).await
        }
        Err(e) => {
            tracing::warn!(grant = %key.tag(), error = %e, "refresh failed; keeping the grant");
            Ok(Access::Unavailable(e.to_string()))
        }
    }
}

/// Removes a dead grant at `version`; if it changed meanwhile, the newer one is used instead.
pub async fn forget(state: &AppState, key: &GrantKey, version: i64) -> Result<Access, StoreError> {
    if state.grants.delete_if_unchanged(key, version).await? {
        crate::audit::Audit {
            principal: Some(&key.principal),
            provider: Some(&key.provider),
            flow_id: None,
        }
        .notice("grant.removed", "refresh token refused; grant removed");
        return Ok(Access::SignInNeeded);
    }
    newer(state, key).await
}

/// Someone else refreshed or reconnected meanwhile: theirs is the grant to use.
async fn newer(state: &AppState, key: &GrantKey) -> Result<Access, StoreError> {
    Ok(match state.grants.get(key).await? {
        Some(grant) => Access::Token {
            token: grant.tokens.access_token,
            account: grant.tokens.account,
            version: grant.version,
        },
        None => Access::SignInNeeded,
    })
}
