//! A usable access token for (principal, provider): the stored one, refreshed first when it
//! is about to expire, by one caller across all replicas (see [`refresh`]).
//!
//! Only `invalid_grant` (the refresh token is dead) removes a grant, and only if nobody
//! refreshed or reconnected it meanwhile, so a lost race never disconnects a user. Other
//! refusals (`invalid_client`: grantry's own credentials) and outages keep the grant and fail
//! the call with a retryable error.

use std::time::Duration;

use tokio::time::Instant;

use crate::clock::unix_now;
use crate::grants::{Grant, GrantKey};
use crate::providers::oauth::{self, TokenError};
use crate::providers::{Account, Provider};
use crate::seal::random_id;
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
    if is_fresh(&grant) {
        return Ok(token(grant));
    }
    refresh(state, provider, key, grant).await
}

/// How long a refresh lease lasts: longer than a token request can take, so the lease never
/// lapses while its holder is still waiting for the provider.
const REFRESH_LEASE_MS: i64 = 3 * crate::providers::http::PROVIDER_TIMEOUT.as_millis() as i64;
/// How long a caller waits for another replica's refresh before giving a retryable error.
const REFRESH_WAIT: Duration = Duration::from_secs(15);
const REFRESH_POLL: Duration = Duration::from_millis(100);

/// Refreshes `grant`, once across every replica: the caller that takes the grant's lease
/// re-reads the grant (someone may have just refreshed it), asks the provider, and stores the
/// new tokens with compare-and-set before anyone uses them; everyone else waits for the new
/// version. A refresh whose outcome is unknown (timeout, 5xx) at a provider that rotates
/// refresh tokens with no grace window keeps the lease until it lapses: the provider may have
/// rotated already, and replaying the old token at once could make it revoke the whole grant.
/// Where the previous token stays valid for a while (Xero) or never rotates, the next caller
/// may simply try again.
pub async fn refresh(
    state: &AppState,
    provider: &Provider,
    key: &GrantKey,
    grant: Grant,
) -> Result<Access, StoreError> {
    let lease = format!("refresh:{}", key.tag());
    let holder = random_id();
    let deadline = Instant::now() + REFRESH_WAIT;
    loop {
        if state
            .leases
            .try_acquire(&lease, &holder, REFRESH_LEASE_MS)
            .await?
        {
            let outcome = refresh_holding_lease(state, provider, key, grant.version).await;
            let replay_is_risky = provider.refresh_rotates && provider.refresh_grace_secs == 0;
            let keep_lease = replay_is_risky && matches!(outcome, Ok(Access::Unavailable(_)));
            if !keep_lease {
                state.leases.release(&lease, &holder).await?;
            }
            return outcome;
        }
        tokio::time::sleep(REFRESH_POLL).await;
        match state.grants.get(key).await? {
            None => return Ok(Access::SignInNeeded),
            Some(current) if current.version != grant.version && is_fresh(&current) => {
                return Ok(token(current));
            }
            Some(_) if Instant::now() >= deadline => {
                return Ok(Access::Unavailable(
                    "another replica's refresh of this grant has not finished".into(),
                ));
            }
            Some(_) => {}
        }
    }
}

/// The refresh itself, by the lease holder.
async fn refresh_holding_lease(
    state: &AppState,
    provider: &Provider,
    key: &GrantKey,
    seen_version: i64,
) -> Result<Access, StoreError> {
    // Someone may have refreshed (or reconnected) between our read and the lease.
    let Some(grant) = state.grants.get(key).await? else {
        return Ok(Access::SignInNeeded);
    };
    if grant.version != seen_version && is_fresh(&grant) {
        return Ok(token(grant));
    }
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

fn is_fresh(grant: &Grant) -> bool {
    grant.tokens.expires_at - REFRESH_MARGIN_SECS > unix_now()
}

fn token(grant: Grant) -> Access {
    Access::Token {
        token: grant.tokens.access_token,
        account: grant.tokens.account,
        version: grant.version,
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
        Some(grant) => token(grant),
        None => Access::SignInNeeded,
    })
}
