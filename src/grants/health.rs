//! A connection's health, kept with its grant: its state, why, how its refreshes have gone,
//! and when the keep-alive scheduler should next look at it.

use crate::ui::Lang;
use serde::{Deserialize, Serialize};

use crate::providers::Provider;

/// Where a connection stands. A disconnected one has no row: its end is its
/// `connection.disconnected` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Active,
    /// Refreshes fail for a reason that may pass (5xx, timeouts, 429); tried again later.
    RefreshFailing,
    /// The provider no longer honours the grant; only the user can mend it (reconnect).
    NeedsReauth,
}

impl State {
    pub const ALL: [State; 3] = [State::Active, State::RefreshFailing, State::NeedsReauth];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::RefreshFailing => "refresh_failing",
            Self::NeedsReauth => "needs_reauth",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// Why a connection needs the user to reconnect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReauthReason {
    /// The token endpoint answered `invalid_grant`: the refresh token expired or was revoked.
    InvalidGrant,
    /// The grant holds no refresh token and its access token expired.
    NoRefreshToken,
    /// The API refused a token just refreshed (401).
    TokenRefused,
    /// The API refused access (403): consent withdrawn, tenant disconnected, scope removed.
    AccessWithdrawn,
}

impl ReauthReason {
    const ALL: [ReauthReason; 4] = [
        Self::InvalidGrant,
        Self::NoRefreshToken,
        Self::TokenRefused,
        Self::AccessWithdrawn,
    ];

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidGrant => "invalid_grant",
            Self::NoRefreshToken => "no_refresh_token",
            Self::TokenRefused => "token_refused",
            Self::AccessWithdrawn => "access_withdrawn",
        }
    }

    /// Said to the person asked to reconnect.
    pub fn explained(self, lang: Lang, brand: &str, provider: &str) -> String {
        let key = match self {
            Self::InvalidGrant => "reauth-invalid-grant",
            Self::NoRefreshToken => "reauth-no-refresh-token",
            Self::TokenRefused => "reauth-token-refused",
            Self::AccessWithdrawn => "reauth-access-withdrawn",
        };
        lang.t_with(key, &[("provider", provider), ("brand", brand)])
    }
}

/// What the row's `health` column holds (JSON; fields added later default).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Health {
    /// Why the state is not `active` (`invalid_grant`, `HTTP 503`, `timed out`, …).
    pub reason: Option<String>,
    /// Refresh failures in a row.
    pub failures: u32,
    /// When a failing refresh is tried again.
    pub retry_at: i64,
    /// The last successful refresh (0: none since the sign-in).
    pub refreshed_at: i64,
    /// When the refresh token stops working whatever happens (QuickBooks: five years).
    pub hard_expires_at: Option<i64>,
    /// `connection.expiring` was sent for this hard expiry.
    pub expiry_warned: bool,
    /// The last sign-in (0 on rows from before it was kept: see [`super::Grant::signed_in_at`]).
    pub signed_in_at: i64,
}

impl Health {
    /// The health of a grant just signed in to `provider` at `now`.
    pub fn signed_in(provider: &Provider, now: i64) -> Self {
        Self {
            refreshed_at: now,
            signed_in_at: now,
            hard_expires_at: provider.refresh_max_secs.map(|max| now + max),
            ..Self::default()
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("health serializes")
    }

    /// The column's text; an unreadable one counts as empty (it only holds bookkeeping).
    pub fn from_json(text: &str) -> Self {
        serde_json::from_str(text).unwrap_or_default()
    }
}

/// When the scheduler should next look at a connection in `state` (0: never): to retry a
/// failing refresh, to refresh before the idle window closes, or to warn of a hard expiry.
///
/// The refresh falls at 75-85 % of the idle window (jittered), so each window holds exactly
/// one refresh and a failing provider still has days (on Xero's 60) to recover in.
pub(crate) fn next_look(
    provider: &Provider,
    state: State,
    health: &Health,
    last_write: i64,
    expiry_warning_secs: i64,
) -> i64 {
    match state {
        State::NeedsReauth => 0,
        State::RefreshFailing => health.retry_at.max(1),
        State::Active => {
            let refresh = provider.refresh_idle_secs.map(|idle| {
                let from = health.refreshed_at.max(last_write);
                from + idle * 3 / 4 + rand::random_range(0..=(idle / 10).max(0))
            });
            let warn = health
                .hard_expires_at
                .filter(|_| !health.expiry_warned)
                .map(|at| at - expiry_warning_secs);
            // A time already past is "now" (1), never 0 ("never").
            [refresh, warn]
                .into_iter()
                .flatten()
                .min()
                .map_or(0, |at| at.max(1))
        }
    }
}

/// When the idle window needs its refresh (without jitter), for the scheduler's check that a
/// grant it was given is really due.
pub(crate) fn refresh_due(provider: &Provider, health: &Health, last_write: i64) -> Option<i64> {
    provider
        .refresh_idle_secs
        .map(|idle| health.refreshed_at.max(last_write) + idle * 3 / 4)
}
