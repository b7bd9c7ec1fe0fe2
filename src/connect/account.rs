//! The post-connect step of a callback: which tenant, company or business the new grant is
//! used with.

use super::errors::PageError;
use super::services::PageServices;
use crate::providers::{Account, Provider, adapters, oauth};

/// The post-connect step: which tenant, company or business the grant is used with. A
/// failure here stores nothing; the code was redeemed, so the user starts again.
pub(super) async fn pick_account(
    state: &PageServices,
    provider: &Provider,
    tokens: &oauth::TokenSet,
    hints: &adapters::CallbackHints,
) -> Result<Option<Account>, PageError> {
    let api = state.connections.api(provider, &tokens.access_token, None);
    adapters::pick_account(&api, hints).await.map_err(|e| {
        tracing::warn!(provider = %provider.id, error = %e, "no account to use after connect");
        PageError::Account(e)
    })
}
