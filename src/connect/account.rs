//! The post-connect step of a callback: which tenant, company or business the new grant is
//! used with, and the page when there is none to use.

use axum::http::StatusCode;
use axum::response::Response;

use super::pages;
use crate::providers::invoice::ApiError;
use crate::providers::{Account, Provider, adapters, oauth};
use crate::state::AppState;

/// The post-connect step: which tenant, company or business the grant is used with. A
/// failure here stores nothing; the code was redeemed, so the user starts again.
pub(super) async fn pick_account(
    state: &AppState,
    provider: &Provider,
    tokens: &oauth::TokenSet,
    hints: &adapters::CallbackHints,
) -> Result<Option<Account>, Response> {
    let api = adapters::Api {
        upstream: &state.upstream,
        provider,
        access_token: &tokens.access_token,
        account: None,
    };
    adapters::pick_account(&api, hints).await.map_err(|e| {
        tracing::warn!(provider = %provider.id, error = %e, "no account to use after connect");
        account_page(&e)
    })
}

/// The page for a connection whose account cannot be used.
pub(super) fn account_page(error: &ApiError) -> Response {
    let detail = match error {
        ApiError::WrongRegion(message) => format!("{message}. Ask the operator to add it."),
        _ => {
            "The provider did not say which account to use. Ask your assistant again to start over."
                .into()
        }
    };
    pages::message(
        StatusCode::BAD_GATEWAY,
        "The account could not be connected",
        &detail,
    )
}
