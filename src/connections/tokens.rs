//! The token lifecycle: a usable access token for (principal, provider), the stored one,
//! refreshed first when it is about to expire, by one caller across all replicas (see
//! [`TokenKeeper::refresh`]).
//!
//! `invalid_grant` (the refresh token is dead) marks the connection `needs_reauth`, and only
//! if nobody refreshed or reconnected it meanwhile, so a lost race never signs a user out; the
//! grant is kept (its id and history survive) until the user reconnects or disconnects. Other
//! refusals (`invalid_client`: grantry's own credentials) and outages mark it
//! `refresh_failing` and fail the call with a retryable error.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::lifecycle::Lifecycle;
use crate::grants::{Grant, GrantKey, Grants, ReauthReason, State};
use crate::identity::McpClient;
use crate::leases::LeaseBackend;
use crate::providers::oauth::{self, ProviderToken, TokenError};
use crate::providers::{Account, Provider, SignIn, revocation};
use crate::seal::random_id;
use crate::store::StoreError;
use grantry_base::clock::unix_now;

/// What keeping tokens alive needs: the lifecycle writes (and through them the grants), the
/// leases that make a refresh happen once across replicas, the HTTP client for token
/// endpoints and the redirect URI they were issued for. Cheap to clone (a refresh runs as a
/// task of its own, holding one).
#[derive(Clone)]
pub struct TokenKeeper {
    pub lifecycle: Lifecycle,
    pub leases: Arc<dyn LeaseBackend>,
    pub http: reqwest::Client,
    pub redirect_uri: Arc<str>,
}

/// Refresh this many seconds before the access token expires.
pub(crate) const REFRESH_MARGIN_SECS: i64 = 60;

pub(crate) enum TokenAccess {
    /// A token to use, the account it is for, and the version of the grant it came from.
    Token {
        token: ProviderToken,
        account: Option<Account>,
        version: i64,
    },
    /// No grant, or it can no longer be used (and why): the user must sign in.
    SignInNeeded(Option<ReauthReason>),
    /// The provider could not be reached, or refused grantry itself; try again later (why
    /// is logged where it is found).
    Unavailable,
}

/// What asked for a refresh, for the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// A tool needed the token.
    OnUse,
    /// The keep-alive scheduler, before the provider's idle window closes.
    KeepAlive,
}

impl Trigger {
    fn label(self) -> &'static str {
        match self {
            Self::OnUse => "on_use",
            Self::KeepAlive => "keepalive",
        }
    }
}

impl TokenKeeper {
    /// The grants' store.
    pub(crate) fn grants(&self) -> &Grants {
        self.lifecycle.grants()
    }

    /// A usable token for the grant as just read (`None`: none stored): the stored one, or a
    /// fresh one if it is about to expire, for a use through `client`.
    pub(crate) async fn access_with(
        &self,
        provider: &Provider,
        key: &GrantKey,
        grant: Option<Grant>,
        client: Option<&McpClient>,
    ) -> Result<TokenAccess, StoreError> {
        let Some(grant) = grant else {
            return Ok(TokenAccess::SignInNeeded(None));
        };
        if !grant.is_usable() {
            return Ok(signed_out(&grant));
        }
        self.lifecycle.record_use(key, &grant, client, unix_now());
        if is_fresh(&grant) {
            return Ok(token(grant));
        }
        self.refresh(provider, key, grant, Trigger::OnUse).await
    }

    /// Refreshes `grant`, once across every replica: the caller that takes the grant's lease
    /// re-reads the grant (someone may have just refreshed it), asks the provider, and stores
    /// the new tokens with compare-and-set before anyone uses them; everyone else waits for
    /// the new version. The lease holder's work runs as its own task, so a client that hangs
    /// up cannot cut it off between the provider's answer and the write.
    ///
    /// When the outcome is unknown (timeout, 5xx, the store failing after the provider
    /// answered) at a provider that rotates refresh tokens with no grace window, the lease is
    /// kept until it lapses (30 s): the provider may have rotated already, and replaying the
    /// old token at once could make it revoke the whole grant. Where the previous token stays
    /// valid for a while (Xero) or tokens never rotate, the next caller may simply try again.
    pub(crate) async fn refresh(
        &self,
        provider: &Provider,
        key: &GrantKey,
        grant: Grant,
        trigger: Trigger,
    ) -> Result<TokenAccess, StoreError> {
        let lease = lease_name(key);
        let holder = random_id();
        let deadline = Instant::now() + REFRESH_WAIT;
        loop {
            if self
                .leases
                .try_acquire(&lease, &holder, REFRESH_LEASE.as_millis() as i64)
                .await?
            {
                let held_until = Instant::now() + REFRESH_LEASE;
                let refresh = self.clone().refresh_as_holder(
                    provider.clone(),
                    key.clone(),
                    (grant.version, trigger),
                    (lease, holder, held_until),
                );
                let work = tokio::spawn(crate::telemetry::context::carried(refresh));
                return work.await.unwrap_or_else(|e| {
                    Err(StoreError::Unavailable(format!("refresh task: {e}")))
                });
            }
            tokio::time::sleep(REFRESH_POLL).await;
            match self.grants().get(key).await? {
                None => return Ok(TokenAccess::SignInNeeded(None)),
                Some(current) if !current.is_usable() => return Ok(signed_out(&current)),
                Some(current) if current.version != grant.version && is_fresh(&current) => {
                    return Ok(token(current));
                }
                Some(_) if Instant::now() >= deadline => {
                    tracing::warn!(grant = %key.tag(), "another replica's refresh of this grant has not finished");
                    return Ok(TokenAccess::Unavailable);
                }
                Some(_) => {}
            }
        }
    }

    /// The lease holder's part, as a task of its own: the refresh, its count, and the lease
    /// given back unless replaying the old token could be risky (see [`Self::refresh`]).
    async fn refresh_as_holder(
        self,
        provider: Provider,
        key: GrantKey,
        (seen_version, trigger): (i64, Trigger),
        (lease, holder, held_until): (String, String, Instant),
    ) -> Result<TokenAccess, StoreError> {
        let outcome = self
            .refresh_holding_lease(&provider, &key, (seen_version, trigger), held_until)
            .await;
        let settled = matches!(
            outcome,
            Ok(TokenAccess::Token { .. } | TokenAccess::SignInNeeded(_))
        );
        let replay_is_risky = provider
            .oauth()
            .is_some_and(|oauth| oauth.refresh_rotates && oauth.refresh_grace_secs == 0);
        if settled || !replay_is_risky {
            self.release(lease, holder, held_until).await;
        }
        outcome
    }

    /// Gives the lease back. A store that cannot take that now (failing over) is asked again
    /// in the background until the lease would lapse anyway: a lease left behind would make
    /// every caller of this grant wait for it. The refresh's outcome stands either way.
    async fn release(&self, lease: String, holder: String, held_until: Instant) {
        if self.leases.release(&lease, &holder).await.is_ok() {
            return;
        }
        let leases = self.leases.clone();
        tokio::spawn(async move {
            while Instant::now() < held_until {
                tokio::time::sleep(Duration::from_millis(250)).await;
                if leases.release(&lease, &holder).await.is_ok() {
                    return;
                }
            }
        });
    }

    /// The refresh itself, by the lease holder.
    async fn refresh_holding_lease(
        &self,
        provider: &Provider,
        key: &GrantKey,
        (seen_version, trigger): (i64, Trigger),
        held_until: Instant,
    ) -> Result<TokenAccess, StoreError> {
        // Someone may have refreshed (or reconnected) between our read and the lease: then
        // there is nothing to refresh, and nothing to count.
        let grant = match self.grants().get(key).await {
            Ok(Some(grant)) => grant,
            Ok(None) => return Ok(TokenAccess::SignInNeeded(None)),
            Err(e) => {
                crate::metrics::refresh(&provider.id, trigger.label(), "store_error");
                return Err(e);
            }
        };
        if !grant.is_usable() {
            return Ok(signed_out(&grant));
        }
        if grant.version != seen_version && is_fresh(&grant) {
            return Ok(token(grant));
        }
        let outcome = self.refresh_grant(provider, key, grant, held_until).await;
        crate::metrics::refresh(&provider.id, trigger.label(), refresh_label(&outcome));
        outcome
    }

    /// Asks the provider for new tokens for `grant` and keeps them; marks a grant the
    /// provider no longer honours `needs_reauth`, one it could not refresh now
    /// `refresh_failing`. The lease is held until `held_until`.
    async fn refresh_grant(
        &self,
        provider: &Provider,
        key: &GrantKey,
        grant: Grant,
        held_until: Instant,
    ) -> Result<TokenAccess, StoreError> {
        let Some(current) = grant.tokens.refresh_token.clone() else {
            // An API key is never refreshed: here, the provider refused it.
            let reason = match provider.sign_in {
                SignIn::ApiKey(_) => ReauthReason::TokenRefused,
                SignIn::OAuth(_) => ReauthReason::NoRefreshToken,
            };
            return self.needs_reauth(provider, key, &grant, reason).await;
        };
        match self.ask_provider(provider, &grant, &current).await {
            Ok(tokens) => {
                self.keep_refreshed(provider, key, &grant, tokens, held_until)
                    .await
            }
            Err(TokenError::Rejected(reason)) if oauth::grant_is_dead(&reason) => {
                tracing::warn!(grant = %key.tag(), "refresh token rejected; the user must sign in again");
                self.needs_reauth(provider, key, &grant, ReauthReason::InvalidGrant)
                    .await
            }
            Err(e) => {
                tracing::warn!(grant = %key.tag(), error = %e, "refresh failed; keeping the grant");
                let noted = self
                    .lifecycle
                    .note_refresh_failed(key, provider, &grant, &e.to_string(), unix_now())
                    .await;
                if let Err(store) = noted {
                    tracing::warn!(grant = %key.tag(), error = %store, "recording a failed refresh failed");
                }
                Ok(TokenAccess::Unavailable)
            }
        }
    }

    /// The token request; if the refresh token we hold is refused but the one it replaced is
    /// still inside the provider's grace window, that one may still work (Xero keeps it for
    /// 30 minutes).
    async fn ask_provider(
        &self,
        provider: &Provider,
        grant: &Grant,
        current: &ProviderToken,
    ) -> Result<oauth::TokenSet, TokenError> {
        let Some(client) = provider.oauth() else {
            // An API key is never refreshed: a refused one needs a new key.
            return Err(TokenError::Rejected("invalid_grant".into()));
        };
        let answer = oauth::refresh(&self.http, client, &self.redirect_uri, current).await;
        if matches!(&answer, Err(TokenError::Rejected(reason)) if oauth::grant_is_dead(reason))
            && let Some(previous) = grant.tokens.previous_refresh_token.as_ref()
            && grant
                .tokens
                .rotated_at
                .is_some_and(|at| unix_now() - at < client.refresh_grace_secs)
        {
            return oauth::refresh(&self.http, client, &self.redirect_uri, previous).await;
        }
        answer
    }

    /// Stores the provider's new tokens (with what the answer left out kept from the grant),
    /// unless the grant changed meanwhile.
    async fn keep_refreshed(
        &self,
        provider: &Provider,
        key: &GrantKey,
        grant: &Grant,
        mut tokens: oauth::TokenSet,
        held_until: Instant,
    ) -> Result<TokenAccess, StoreError> {
        tokens.account = grant.tokens.account.clone();
        if tokens.scopes.is_empty() {
            tokens.scopes = grant.tokens.scopes.clone(); // RFC 6749 §5.1: unchanged
        }
        // A new refresh token replaced the one held: keep that one for the grace window.
        if tokens.refresh_token != grant.tokens.refresh_token {
            tokens.previous_refresh_token = grant.tokens.refresh_token.clone();
            tokens.rotated_at = Some(unix_now());
        }
        if !self
            .write_refreshed(provider, key, grant, &tokens, held_until)
            .await?
        {
            let newer = self.newer(key).await?;
            if matches!(newer, TokenAccess::SignInNeeded(_)) {
                // Disconnected meanwhile: the tokens just issued must not stay alive.
                revocation::revoke_in_background(&self.http, provider, &tokens);
            }
            return Ok(newer);
        }
        Ok(TokenAccess::Token {
            token: tokens.access_token,
            account: tokens.account,
            version: grant.version + 1,
        })
    }

    /// Stores refreshed tokens with compare-and-set, trying a failing store again until just
    /// before the lease lapses (a store failing over is back within seconds): the provider
    /// may have rotated, so these tokens may be the only ones that still work, and while the
    /// lease is held nobody replays the old ones.
    async fn write_refreshed(
        &self,
        provider: &Provider,
        key: &GrantKey,
        grant: &Grant,
        tokens: &oauth::TokenSet,
        held_until: Instant,
    ) -> Result<bool, StoreError> {
        let mut pause = Duration::from_millis(250);
        loop {
            let written = self
                .lifecycle
                .store_refreshed(key, provider, grant, tokens, unix_now())
                .await;
            match written {
                Err(e) if Instant::now() + pause + LEASE_MARGIN < held_until => {
                    tracing::warn!(grant = %key.tag(), error = %e, "storing refreshed tokens failed; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                other => return other,
            }
        }
    }

    /// Marks a grant the provider no longer honours `needs_reauth` (kept until the user
    /// reconnects or disconnects); if it changed meanwhile, the newer one is used instead.
    pub(crate) async fn needs_reauth(
        &self,
        provider: &Provider,
        key: &GrantKey,
        grant: &Grant,
        reason: ReauthReason,
    ) -> Result<TokenAccess, StoreError> {
        if self
            .lifecycle
            .mark_needs_reauth(key, provider, grant, reason, unix_now())
            .await?
        {
            return Ok(TokenAccess::SignInNeeded(Some(reason)));
        }
        self.newer(key).await
    }

    /// Someone else refreshed or reconnected meanwhile: theirs is the grant to use.
    async fn newer(&self, key: &GrantKey) -> Result<TokenAccess, StoreError> {
        Ok(match self.grants().get(key).await? {
            Some(grant) if !grant.is_usable() => signed_out(&grant),
            Some(grant) => token(grant),
            None => TokenAccess::SignInNeeded(None),
        })
    }
}

/// How long a refresh lease lasts: longer than a token request can take, so the lease never
/// lapses while its holder is still waiting for the provider.
const REFRESH_LEASE: Duration = crate::providers::http::PROVIDER_TIMEOUT.saturating_mul(3);
/// A write of refreshed tokens is not begun later than this before the lease lapses.
const LEASE_MARGIN: Duration = Duration::from_secs(2);
/// How long a caller waits for another replica's refresh before giving a retryable error.
const REFRESH_WAIT: Duration = Duration::from_secs(15);
const REFRESH_POLL: Duration = Duration::from_millis(100);

/// How a refresh ended, for the metrics.
fn refresh_label(outcome: &Result<TokenAccess, StoreError>) -> &'static str {
    match outcome {
        Ok(TokenAccess::Token { .. }) => "refreshed",
        Ok(TokenAccess::SignInNeeded(_)) => "needs_reauth",
        Ok(TokenAccess::Unavailable) => "unavailable",
        Err(_) => "store_error",
    }
}

/// The lease that serializes refreshes (and disconnection) of one grant.
pub(crate) fn lease_name(key: &GrantKey) -> String {
    format!("refresh:{}", key.tag())
}

/// The answer for a grant that needs the user to reconnect, with why.
fn signed_out(grant: &Grant) -> TokenAccess {
    debug_assert_eq!(grant.state, State::NeedsReauth);
    TokenAccess::SignInNeeded(grant.health.reason.as_deref().and_then(ReauthReason::parse))
}

fn is_fresh(grant: &Grant) -> bool {
    grant.tokens.expires_at - REFRESH_MARGIN_SECS > unix_now()
}

fn token(grant: Grant) -> TokenAccess {
    TokenAccess::Token {
        token: grant.tokens.access_token,
        account: grant.tokens.account,
        version: grant.version,
    }
}
