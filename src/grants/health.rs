//! A connection's health, kept with its grant: its state, why, and how its refreshes have
//! gone (when the keep-alive next looks at it is the connections service's to say).

use serde::{Deserialize, Serialize};

use crate::ui::Lang;

/// Where a connection stands. A disconnected one has no row: its end is its
/// `connection.disconnected` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Active,
    /// Refreshes fail for a reason that may pass (5xx, timeouts, 429); tried again later.
    RefreshFailing,
    /// The provider no longer honours the grant; only the user can mend it (reconnect).
    NeedsReauth,
}

impl State {
    pub(crate) const ALL: [State; 3] = [State::Active, State::RefreshFailing, State::NeedsReauth];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::RefreshFailing => "refresh_failing",
            Self::NeedsReauth => "needs_reauth",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
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

    pub(crate) fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == text)
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::InvalidGrant => "invalid_grant",
            Self::NoRefreshToken => "no_refresh_token",
            Self::TokenRefused => "token_refused",
            Self::AccessWithdrawn => "access_withdrawn",
        }
    }

    /// Said to the person asked to reconnect.
    pub(crate) fn explained(self, lang: Lang, brand: &str, provider_name: &str) -> String {
        let key = match self {
            Self::InvalidGrant => "reauth-invalid-grant",
            Self::NoRefreshToken => "reauth-no-refresh-token",
            Self::TokenRefused => "reauth-token-refused",
            Self::AccessWithdrawn => "reauth-access-withdrawn",
        };
        lang.t_with(key, &[("provider", provider_name), ("brand", brand)])
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
    pub(crate) refreshed_at: i64,
    /// When the refresh token stops working whatever happens (QuickBooks: five years).
    pub(crate) hard_expires_at: Option<i64>,
    /// `connection.expiring` was sent for this hard expiry.
    pub(crate) expiry_warned: bool,
    /// The last sign-in (0 on rows from before it was kept: see [`super::Grant::signed_in_at`]).
    pub(crate) signed_in_at: i64,
}

impl Health {
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("health serializes")
    }

    /// The column's text; an unreadable one counts as empty (it only holds bookkeeping).
    pub(crate) fn from_json(text: &str) -> Self {
        serde_json::from_str(text).unwrap_or_default()
    }
}
