//! Which provider a call is about, and the caller's grants: the provider named (if offered),
//! else the only one connected, else the catalog's default.

use super::{Call, ToolResult};
use crate::grants::{Grant, GrantKey, ReauthReason};
use crate::identity::Principal;
use crate::providers::adapters::Api;
use crate::providers::{Account, Provider};
use crate::state::AppState;
use crate::store::StoreError;

/// The provider to use: the one named; else the only one connected; else the catalog's
/// default (the caller will be asked to connect it). A provider not offered, or several
/// connected and none named, is the caller's to correct: a tool error saying so.
pub async fn provider<'a>(
    call: &Call<'a>,
    named: Option<&str>,
) -> Result<Result<&'a Provider, ToolResult>, StoreError> {
    let catalog = &call.state.catalog;
    if let Some(id) = named {
        return Ok(catalog.get(id).ok_or_else(|| {
            ToolResult::error(format!(
                "The provider `{id}` is not offered here; offered: {}.",
                catalog
                    .all()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }));
    }
    // One provider offered (the usual deployment): nothing to choose, and no need to read
    // every grant of the caller on each call.
    if catalog.all().nth(1).is_none() {
        return Ok(Ok(catalog.default_provider()));
    }
    let connected = connected(call.state, call.principal).await?;
    Ok(match connected.as_slice() {
        [] => Ok(catalog.default_provider()),
        [(provider, _)] => Ok(provider),
        several => Err(ToolResult::error(format!(
            "Several billing accounts are connected ({}); say which one with `provider`.",
            several
                .iter()
                .map(|(p, _)| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    })
}

/// The caller's grants, one per provider of the catalog that has one.
pub async fn connected<'a>(
    state: &'a AppState,
    principal: &Principal,
) -> Result<Vec<(&'a Provider, Grant)>, StoreError> {
    let mut found = Vec::new();
    for provider in state.catalog.all() {
        if let Some(grant) = state.grants.get(&key(principal, provider)).await? {
            found.push((provider, grant));
        }
    }
    Ok(found)
}

/// Which grant: the caller's, at `provider`.
pub fn key(principal: &Principal, provider: &Provider) -> GrantKey {
    GrantKey {
        principal: principal.clone(),
        provider: provider.id.to_string(),
    }
}

/// The adapters' view of one provider call: this token, for this account, at `provider`.
pub fn api<'a>(
    state: &'a AppState,
    provider: &'a Provider,
    token: &'a str,
    account: Option<&'a Account>,
) -> Api<'a> {
    Api {
        upstream: &state.upstream,
        provider,
        access_token: token,
        account,
    }
}

/// The answer for a write at a provider the caller has not connected (or whose connection
/// needs renewing, and why): the sign-in is list_invoices' to ask for.
pub fn not_connected(provider: &Provider, why: Option<ReauthReason>) -> ToolResult {
    let name = &provider.display_name;
    let what = match why {
        Some(why) => format!(
            "The {name} connection needs to be renewed: {}.",
            why.explained(name)
        ),
        None => format!("No {name} account is connected."),
    };
    ToolResult::error(format!(
        "{what} Call list_invoices first: it asks the user to connect."
    ))
}

/// A retryable tool error: the provider is busy or failing. `doing` says what could not be
/// done ("invoices could not be listed", "nothing was changed").
pub fn unavailable(provider: &Provider, retry_after_secs: Option<u64>, doing: &str) -> ToolResult {
    let when = match retry_after_secs {
        Some(secs) => format!("try again in {secs} seconds"),
        None => "try again in a minute".into(),
    };
    ToolResult::error(format!(
        "{} is not answering right now, so {doing}. This is temporary: {when}.",
        provider.display_name
    ))
}
