//! The caller's connections, between the protocols (the tools, the MCP rounds, the pages)
//! and the stores: which grants a person holds, which one a request means, the provider call
//! made with one, and a confirmed disconnect with its revocation. The tools and the pages
//! word the answers; this module decides them.

mod disconnect;

pub(crate) use disconnect::disconnect;

use crate::grants::{Grant, GrantKey};
use crate::identity::Principal;
use crate::providers::adapters::Api;
use crate::providers::{Account, Provider};
use crate::state::AppState;
use crate::store::StoreError;

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

/// Which of the caller's grants at a provider a request means.
pub(crate) enum AccountChoice {
    /// This one (absent if none is connected: using it asks to sign in).
    Found(GrantKey),
    /// Several are connected and the request named none: the person or the caller must say.
    AskWhich(Vec<Account>),
    /// The request named an account that is no single connected one.
    NoneNamed {
        named: String,
        connected: Vec<Account>,
    },
}

/// The grant a request means at `provider`: the account `named` (by id or, ignoring case, by
/// name), else the only one connected.
pub(crate) async fn choose_account(
    state: &AppState,
    principal: &Principal,
    provider: &Provider,
    named: Option<&str>,
) -> Result<AccountChoice, StoreError> {
    // A provider without accounts has one grant per person, under the one key: no need to
    // list them (a store read less on every call to it).
    if named.is_none() && !provider.adapter.has_accounts() {
        return Ok(AccountChoice::Found(key(principal, provider)));
    }
    let grants = state.grants.list(principal, &provider.id).await?;
    if grants.is_empty() {
        return Ok(AccountChoice::Found(key(principal, provider)));
    }
    let accounts = || {
        grants
            .iter()
            .filter_map(|(_, g)| g.tokens.account.clone())
            .collect()
    };
    let Some(named) = named else {
        return Ok(match grants.as_slice() {
            [(key, _)] => AccountChoice::Found(key.clone()),
            _ => AccountChoice::AskWhich(accounts()),
        });
    };
    Ok(match named_grant(&grants, named) {
        Some(key) => AccountChoice::Found(key.clone()),
        None => AccountChoice::NoneNamed {
            named: named.to_owned(),
            connected: accounts(),
        },
    })
}

/// The grant whose account `named` names: by id first (ids are the provider's own, unique);
/// else by name, which must then name one account only (organisations' names are theirs to
/// choose, and may repeat).
fn named_grant<'a>(grants: &'a [(GrantKey, Grant)], named: &str) -> Option<&'a GrantKey> {
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
    found.map(|(key, _)| key)
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
