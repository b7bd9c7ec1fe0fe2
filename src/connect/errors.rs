//! Why a browser route stops. Each error is the page it answers with (status, title,
//! message); for a claimed sign-in, also how its flow ends and, for what may be an attack,
//! the security event the caller logs with the flow's fields. A store outage is logged and
//! counted here, once, where it becomes a page.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::pages;
use crate::flows::FlowStatus;
use crate::providers::invoice::ApiError;
use crate::store::StoreError;

/// A browser route's refusal or failure.
#[derive(Debug, thiserror::Error)]
pub(super) enum PageError {
    /// A link that does not open (forged, expired, cut short).
    #[error("invalid sign-in link")]
    InvalidLink,
    /// A callback that is no answer to a sign-in started here.
    #[error("invalid sign-in response")]
    InvalidResponse,
    /// The browser came back after the sign-in expired.
    #[error("sign-in expired")]
    Expired,
    /// The callback reached a browser that did not start the sign-in.
    #[error("callback in another browser")]
    OtherBrowser,
    /// The callback was made by another user than the sign-in's.
    #[error("callback by another user")]
    OtherUser,
    /// RFC 9207 `iss` did not match the provider's issuer.
    #[error("iss mismatch")]
    IssMismatch,
    /// The provider answered with an error; `denied` when the user said no.
    #[error("the provider did not complete the sign-in")]
    NotCompleted { denied: bool },
    /// The code could not be redeemed.
    #[error("code exchange failed")]
    ExchangeFailed,
    /// The connected account cannot be used (none, or in another region).
    #[error("no usable account: {0}")]
    Account(ApiError),
    /// The provider's catalog entry cannot send anyone anywhere.
    #[error("provider misconfigured")]
    Misconfigured,
    /// The store is away: nothing was changed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl PageError {
    /// How a claimed flow ends when its callback stops with this error.
    pub(super) fn flow_status(&self) -> FlowStatus {
        match self {
            PageError::NotCompleted { denied: true } => FlowStatus::Denied,
            _ => FlowStatus::Failed,
        }
    }

    /// The security event this error is (`event`, what happened), if it may be an attack.
    pub(super) fn alarm(&self) -> Option<(&'static str, &'static str)> {
        match self {
            PageError::OtherBrowser => Some((
                "callback.binding_mismatch",
                "callback reached a browser that did not start this sign-in",
            )),
            PageError::OtherUser => {
                Some(("callback.identity_mismatch", "callback by another user"))
            }
            PageError::IssMismatch => {
                Some(("callback.iss_mismatch", "RFC 9207 iss does not match"))
            }
            _ => None,
        }
    }

    /// The page's status, title and message.
    fn page(&self) -> (StatusCode, &'static str, &'static str) {
        use StatusCode as S;
        match self {
            PageError::InvalidLink => (
                S::BAD_REQUEST,
                "This sign-in link is not valid",
                "The link is expired or incomplete. Ask your assistant again and it will give you a new link.",
            ),
            PageError::InvalidResponse | PageError::IssMismatch => (
                S::BAD_REQUEST,
                "This sign-in response is not valid",
                "Nothing was connected. Ask your assistant again for a new link.",
            ),
            PageError::Expired => (
                S::BAD_REQUEST,
                "This sign-in expired",
                "It took too long to come back from the provider. Ask your assistant again for a new link.",
            ),
            PageError::OtherBrowser => (
                S::FORBIDDEN,
                "This sign-in was started in another browser",
                "For your safety it was stopped. Open the link your assistant gave you in this browser.",
            ),
            PageError::OtherUser => (
                S::FORBIDDEN,
                "This sign-in belongs to someone else",
                "For your safety it was stopped.",
            ),
            PageError::NotCompleted { .. } => (
                S::OK,
                "Account not connected",
                "The sign-in was not completed, so nothing was connected. You can close this page.",
            ),
            PageError::ExchangeFailed => (
                S::BAD_GATEWAY,
                "The account could not be connected",
                "The provider did not complete the sign-in. Ask your assistant again to start over.",
            ),
            PageError::Account(_) => (
                S::BAD_GATEWAY,
                "The account could not be connected",
                "The provider did not say which account to use. Ask your assistant again to start over.",
            ),
            PageError::Misconfigured => (
                S::INTERNAL_SERVER_ERROR,
                "This provider is misconfigured",
                "grantry cannot send you to this provider. The operator has been told in the log.",
            ),
            PageError::Store(_) => (
                S::SERVICE_UNAVAILABLE,
                "grantry is unavailable for a moment",
                "Nothing was changed. Please try again in a minute.",
            ),
        }
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        match &self {
            PageError::Store(e) => {
                crate::metrics::store_error("connect");
                tracing::error!(error = %e, "store unavailable on a browser route");
            }
            PageError::Account(ApiError::WrongRegion(region)) => {
                return pages::message(
                    StatusCode::BAD_GATEWAY,
                    "The account could not be connected",
                    &format!("{region}. Ask the operator to add it."),
                );
            }
            _ => {}
        }
        let (status, title, message) = self.page();
        pages::message(status, title, message)
    }
}
