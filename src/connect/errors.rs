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
use crate::ui;

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

    /// The page's status, and the catalog keys of its title and message.
    fn page(&self) -> (StatusCode, &'static str, &'static str) {
        use StatusCode as S;
        match self {
            PageError::InvalidLink => (
                S::BAD_REQUEST,
                "error-invalid-link-title",
                "error-invalid-link-body",
            ),
            PageError::InvalidResponse | PageError::IssMismatch => (
                S::BAD_REQUEST,
                "error-invalid-response-title",
                "error-invalid-response-body",
            ),
            PageError::Expired => (S::BAD_REQUEST, "error-expired-title", "error-expired-body"),
            PageError::OtherBrowser => (
                S::FORBIDDEN,
                "error-other-browser-title",
                "error-other-browser-body",
            ),
            PageError::OtherUser => (
                S::FORBIDDEN,
                "error-other-user-title",
                "error-other-user-body",
            ),
            PageError::NotCompleted { .. } => (
                S::OK,
                "error-not-completed-title",
                "error-not-completed-body",
            ),
            PageError::ExchangeFailed => (
                S::BAD_GATEWAY,
                "error-not-connected-title",
                "error-exchange-failed-body",
            ),
            PageError::Account(_) => (
                S::BAD_GATEWAY,
                "error-not-connected-title",
                "error-no-account-body",
            ),
            PageError::Misconfigured => (
                S::INTERNAL_SERVER_ERROR,
                "error-misconfigured-title",
                "error-misconfigured-body",
            ),
            // Not an outage: this replica cannot open what the store holds (its keys differ
            // from the other replicas'), which only the operator mends.
            PageError::Store(StoreError::Unopenable { .. }) => (
                S::INTERNAL_SERVER_ERROR,
                "error-unopenable-title",
                "error-unopenable-body",
            ),
            PageError::Store(_) => (
                S::SERVICE_UNAVAILABLE,
                "error-unavailable-title",
                "error-unavailable-body",
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
                    &ui::t("error-not-connected-title"),
                    &ui::t_with("error-wrong-region-body", &[("region", region)]),
                );
            }
            _ => {}
        }
        let (status, title, message) = self.page();
        let brand = ui::brand();
        let args = [("brand", brand.name.as_str())];
        pages::message(
            status,
            &ui::t_with(title, &args),
            &ui::t_with(message, &args),
        )
    }
}
