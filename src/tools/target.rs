//! Which provider and account a call is about, and the caller's grants: the provider named
//! (if offered), else the only one connected, else the catalog's default; at it, the account
//! named, else the only one connected.

use serde_json::{Value, json};

use super::{Call, ToolResult};
use crate::grants::{Grant, GrantKey, ReauthReason};
use crate::identity::Principal;
use crate::providers::adapters::Api;
use crate::providers::{Account, Provider};
use crate::state::AppState;
use crate::store::StoreError;
use crate::ui::Lang;

/// The provider to use: the one named; else the only one connected; else the catalog's
/// default (the caller will be asked to connect it). A provider not offered, or several
/// connected and none named, is the caller's to correct: a tool error saying so.
pub(crate) async fn provider<'a>(
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
    let mut providers: Vec<&Provider> = connected(call.state, call.principal)
        .await?
        .into_iter()
        .map(|c| c.provider)
        .collect();
    providers.dedup_by_key(|p| p.id.as_str());
    Ok(match providers.as_slice() {
        [] => Ok(catalog.default_provider()),
        [provider] => Ok(provider),
        several => Err(ToolResult::error(format!(
            "Several billing accounts are connected ({}); say which one with `provider`.",
            several
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    })
}

/// One of the caller's connections.
pub(crate) struct Connection<'a> {
    pub provider: &'a Provider,
    pub key: GrantKey,
    pub grant: Grant,
}

/// The caller's grants: per provider of the catalog, in its order, each account's.
pub(crate) async fn connected<'a>(
    state: &'a AppState,
    principal: &Principal,
) -> Result<Vec<Connection<'a>>, StoreError> {
    let mut found = Vec::new();
    for provider in state.catalog.all() {
        for (key, grant) in state.grants.list(principal, &provider.id).await? {
            found.push(Connection {
                provider,
                key,
                grant,
            });
        }
    }
    Ok(found)
}

/// Which of the caller's grants at a provider a call uses.
pub(crate) enum Chosen {
    /// This one (absent if none is connected: using it asks to sign in).
    Grant(GrantKey),
    /// Several are connected and the call named none: the person or the caller must say.
    Ambiguous(Vec<Account>),
}

/// The grant a call uses at `provider`: the account `named` (by id or, ignoring case, by
/// name), else the only one connected. A name that matches none is the caller's to correct: a
/// tool error listing what is connected.
pub(crate) async fn account(
    call: &Call<'_>,
    provider: &Provider,
    named: Option<&str>,
) -> Result<Result<Chosen, ToolResult>, StoreError> {
    // A provider without accounts has one grant per person, under the one key: no need to
    // list them (a store read less on every call to it).
    if named.is_none() && !provider.adapter.has_accounts() {
        return Ok(Ok(Chosen::Grant(key(call.principal, provider))));
    }
    let grants = call.state.grants.list(call.principal, &provider.id).await?;
    if grants.is_empty() {
        return Ok(Ok(Chosen::Grant(key(call.principal, provider))));
    }
    let accounts = || {
        grants
            .iter()
            .filter_map(|(_, g)| g.tokens.account.clone())
            .collect()
    };
    let Some(named) = named else {
        return Ok(match grants.as_slice() {
            [(key, _)] => Ok(Chosen::Grant(key.clone())),
            _ => Ok(Chosen::Ambiguous(accounts())),
        });
    };
    // By id first (ids are the provider's own, unique); else by name, which must then name
    // one account only (organisations' names are theirs to choose, and may repeat).
    let account_of = |g: &Grant| g.tokens.account.clone();
    let by_id = grants
        .iter()
        .find(|(_, g)| account_of(g).is_some_and(|a| a.id == named));
    let mut by_name = grants
        .iter()
        .filter(|(_, g)| account_of(g).is_some_and(|a| a.name.eq_ignore_ascii_case(named)));
    let found = by_id.or_else(|| match (by_name.next(), by_name.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    });
    match found {
        Some((key, _)) => Ok(Ok(Chosen::Grant(key.clone()))),
        None => Ok(Err(ToolResult::error(format!(
            "`{named}` names no single connected {} account (give its id, or a name no other \
             account has). {}",
            provider.display_name,
            which_accounts(provider, &accounts())
        )))),
    }
}

/// The grant a call that cannot ask uses: as [`account`] chooses; several connected and none
/// named is a tool error listing them.
pub(crate) async fn account_or_refusal(
    call: &Call<'_>,
    provider: &Provider,
    named: Option<&str>,
) -> Result<Result<GrantKey, ToolResult>, StoreError> {
    Ok(match account(call, provider, named).await? {
        Ok(Chosen::Grant(key)) => Ok(key),
        Ok(Chosen::Ambiguous(accounts)) => Err(ToolResult::error(format!(
            "Several {} accounts are connected. {}",
            provider.display_name,
            which_accounts(provider, &accounts)
        ))),
        Err(answer) => Err(answer),
    })
}

/// The `account` argument, as `tools/list` shows it.
pub(crate) fn account_property() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_ACCOUNT_LEN,
        "description": "Which connected account at the provider (its name or id, as \
                        list_connections shows). Needed only when several are connected."
    })
}

/// The longest `account` argument taken.
pub(crate) const MAX_ACCOUNT_LEN: usize = 255;

/// Names the connected accounts, for a caller to choose from with `account`.
pub(crate) fn which_accounts(provider: &Provider, accounts: &[Account]) -> String {
    let listed: Vec<String> = accounts
        .iter()
        .map(|a| format!("{} (id {})", a.name, a.id))
        .collect();
    format!(
        "Connected {} accounts: {}; say which one with `account` (its name or id).",
        provider.display_name,
        listed.join(", ")
    )
}

/// The key of the caller's grant at a provider without accounts (or of the sign-in a call
/// asks for when none is connected).
pub(crate) fn key(principal: &Principal, provider: &Provider) -> GrantKey {
    GrantKey::sole(principal, &provider.id)
}

/// The adapters' view of one provider call: this token, for this account, at `provider`.
pub(crate) fn api<'a>(
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
/// Written for the model, so in English.
pub(crate) fn not_connected(
    state: &AppState,
    provider: &Provider,
    why: Option<ReauthReason>,
) -> ToolResult {
    let name = &provider.display_name;
    let what = match why {
        Some(why) => format!(
            "The {name} connection needs to be renewed: {}.",
            why.explained(Lang::En, &state.config.brand.name, name)
        ),
        None => format!("No {name} account is connected."),
    };
    ToolResult::error(format!(
        "{what} Call list_invoices first: it asks the user to connect."
    ))
}

/// A retryable tool error: the provider is busy or failing. `doing` says what could not be
/// done ("invoices could not be listed", "nothing was changed").
pub(crate) fn unavailable(
    provider: &Provider,
    retry_after_secs: Option<u64>,
    doing: &str,
) -> ToolResult {
    let when = match retry_after_secs {
        Some(secs) => format!("try again in {secs} seconds"),
        None => "try again in a minute".into(),
    };
    ToolResult::error(format!(
        "{} is not answering right now, so {doing}. This is temporary: {when}.",
        provider.display_name
    ))
}
