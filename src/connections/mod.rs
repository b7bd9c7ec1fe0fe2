//! The connections service: a person's connections, between the protocols (the tools, the
//! MCP rounds, the pages) and the stores. Built once at start from explicit parts
//! ([`Connections::new`]); the protocols reach the grants through it alone, and word its
//! answers.
//!
//! - which grants a person holds, and which one a request means ([`AccountChoice`]);
//! - which provider scopes a sign-in asks for, and what a connection lacks ([`consent`]);
//! - a provider call made with a usable token ([`tokens`]: refreshed once across replicas;
//!   [`calls`]: the loop every call goes through);
//! - every change of a connection's life written with its event ([`lifecycle`]);
//! - the keep-alive that refreshes grants before their provider forgets them ([`keepalive`],
//!   on the schedule every write sets: [`schedule`]);
//! - a confirmed disconnect with its revocation ([`disconnect`]);
//! - a connection made with an API key a person typed, checked before it is stored
//!   ([`api_key`]).

pub(crate) mod api_key;
mod calls;
pub(crate) mod consent;
mod disconnect;
mod event;
pub mod keepalive;
pub(crate) mod lifecycle;
pub(crate) mod schedule;
pub(crate) mod tokens;

pub(crate) use calls::Called;
pub(crate) use disconnect::{Disconnected, EndedBy, Revocation};
pub use lifecycle::{Lifecycle, LifecycleSettings};
pub use tokens::TokenKeeper;

use std::future::Future;

use crate::grants::{Grant, GrantEvents, GrantKey, Grants};
use crate::identity::{McpClient, Principal};
use crate::providers::adapters::Api;
use crate::providers::invoice::ApiError;
use crate::providers::oauth::ProviderToken;
use crate::providers::{Account, Catalog, Provider, Upstream};
use crate::store::StoreError;

/// The service, built once at start.
#[derive(Clone)]
pub(crate) struct Connections {
    keeper: TokenKeeper,
    catalog: Catalog,
    upstream: Upstream,
}

/// One of the caller's connections.
pub(crate) struct Connection<'a> {
    pub(crate) provider: &'a Provider,
    pub(crate) key: GrantKey,
    pub(crate) grant: Grant,
}

/// Which of the caller's grants at a provider a request means.
pub(crate) enum AccountChoice {
    /// This one (absent if none is connected: using it asks to sign in).
    Found(ChosenGrant),
    /// Several are connected and the request named none: the person or the caller must say.
    AskWhich(Vec<Choosable>),
    /// The request named an account that is no single connected one.
    NoneNamed {
        named: String,
        connected: Vec<Choosable>,
    },
}

/// A connected account to choose from, and whether its connection is broken: whoever offers
/// it says so, since using it first asks the person to reconnect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choosable {
    pub(crate) account: Account,
    /// Its connection needs a new sign-in before it can be used.
    pub(crate) needs_reauth: bool,
}

/// The grant a request means, and the grant as the choice read it, if it read the store:
/// the call made with it does not read it again.
#[derive(Debug, Clone)]
pub(crate) struct ChosenGrant {
    pub(crate) key: GrantKey,
    /// `Some` when the choice read the store: the grant, or `None` for none stored.
    read: Option<Option<Box<Grant>>>,
}

impl ChosenGrant {
    /// The grant under `key`, unread.
    pub(crate) fn unread(key: GrantKey) -> Self {
        Self { key, read: None }
    }

    fn read(key: GrantKey, grant: Option<Grant>) -> Self {
        Self {
            key,
            read: Some(grant.map(Box::new)),
        }
    }
}

impl Connections {
    /// The service over `keeper` (and through it the grants), for the providers of `catalog`,
    /// whose APIs are reached through `upstream`.
    pub(crate) fn new(keeper: TokenKeeper, catalog: Catalog, upstream: Upstream) -> Self {
        Self {
            keeper,
            catalog,
            upstream,
        }
    }

    /// The grants' store (for what reads them without a person: key rotation).
    pub(crate) fn grants(&self) -> &Grants {
        self.keeper.grants()
    }

    /// The lifecycle writes (a completed sign-in is stored through them).
    pub(crate) fn lifecycle(&self) -> &Lifecycle {
        &self.keeper.lifecycle
    }

    /// Tokens kept usable (the keep-alive refreshes through it).
    pub(crate) fn tokens(&self) -> &TokenKeeper {
        &self.keeper
    }

    /// "A grant landed", across replicas: what a held retry waits on.
    pub(crate) fn landed(&self) -> &GrantEvents {
        self.grants().events()
    }

    /// Stores the grant of a completed sign-in: over the principal's grant for the same
    /// account if there is one (a reconnection), else as a connection of its own.
    pub(crate) async fn store_signed_in(
        &self,
        principal: &Principal,
        provider: &Provider,
        tokens: &crate::providers::oauth::TokenSet,
        now: i64,
    ) -> Result<(), StoreError> {
        let key = self
            .grants()
            .key_for_sign_in(principal, &provider.id, tokens.account.as_ref())
            .await?;
        self.lifecycle()
            .store_signed_in(&key, provider, tokens, now)
            .await
    }

    /// One grant, in any state.
    pub(crate) async fn grant(&self, key: &GrantKey) -> Result<Option<Grant>, StoreError> {
        self.grants().get(key).await
    }

    /// Whether `principal` has a grant at `provider` and every one there is usable: whatever a
    /// call waiting for a sign-in needed is there.
    pub(crate) async fn all_usable(
        &self,
        principal: &Principal,
        provider: &crate::providers::ProviderId,
    ) -> Result<bool, StoreError> {
        let grants = self.grants().list(principal, provider).await?;
        Ok(!grants.is_empty() && grants.iter().all(|(_, g)| g.is_usable()))
    }

    /// The caller's grants: per provider of the catalog, in its order, each account's.
    pub(crate) async fn connected(
        &self,
        principal: &Principal,
    ) -> Result<Vec<Connection<'_>>, StoreError> {
        let mut found = Vec::new();
        for provider in self.catalog.all() {
            found.extend(self.at(principal, provider).await?);
        }
        Ok(found)
    }

    /// The caller's grants at one provider, each account's.
    pub(crate) async fn at<'p>(
        &self,
        principal: &Principal,
        provider: &'p Provider,
    ) -> Result<Vec<Connection<'p>>, StoreError> {
        let listed = self.grants().list(principal, &provider.id).await?;
        Ok(listed
            .into_iter()
            .map(|(key, grant)| Connection {
                provider,
                key,
                grant,
            })
            .collect())
    }

    /// The grant a request means at `provider`: the account `named` (by id or, ignoring
    /// case, by name), else the only one connected.
    pub(crate) async fn choose_account(
        &self,
        principal: &Principal,
        provider: &Provider,
        named: Option<&str>,
    ) -> Result<AccountChoice, StoreError> {
        // A provider without accounts has one grant per person, under the one key: no need
        // to list them (a store read less on every call to it).
        if named.is_none() && !provider.adapter.has_accounts() {
            return Ok(AccountChoice::Found(ChosenGrant::unread(key(
                principal, provider,
            ))));
        }
        let mut grants = self.grants().list(principal, &provider.id).await?;
        if grants.is_empty() {
            let none = ChosenGrant::read(key(principal, provider), None);
            return Ok(AccountChoice::Found(none));
        }
        let accounts = || {
            grants
                .iter()
                .filter_map(|(_, g)| {
                    let account = g.tokens.account.clone()?;
                    let needs_reauth = !g.is_usable();
                    Some(Choosable {
                        account,
                        needs_reauth,
                    })
                })
                .collect()
        };
        let chosen = match named {
            None if grants.len() == 1 => Some(0),
            None => return Ok(AccountChoice::AskWhich(accounts())),
            Some(named) => named_grant(&grants, named),
        };
        let Some(at) = chosen else {
            return Ok(AccountChoice::NoneNamed {
                named: named.unwrap_or_default().to_owned(),
                connected: accounts(),
            });
        };
        let (key, grant) = grants.swap_remove(at);
        Ok(AccountChoice::Found(ChosenGrant::read(key, Some(grant))))
    }

    /// Calls a provider's API with the token (and account) of the grant `chosen`: refreshed
    /// first if it is about to expire, once more after a 401 (see [`calls`]). `api` makes
    /// the call with [`Self::api`]. The use is recorded with the `client` it came through.
    pub(crate) async fn call<T, F, Fut>(
        &self,
        provider: &Provider,
        chosen: &ChosenGrant,
        client: Option<&McpClient>,
        api: F,
    ) -> Result<Called<T>, StoreError>
    where
        F: FnMut(ProviderToken, Option<Account>) -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        let read = chosen.read.clone().map(|grant| grant.map(|g| *g));
        self.keeper
            .call(provider, &chosen.key, read, client, api)
            .await
    }

    /// The adapters' view of one provider call: this token, for this account, at `provider`.
    pub(crate) fn api<'a>(
        &'a self,
        provider: &'a Provider,
        token: &'a ProviderToken,
        account: Option<&'a Account>,
    ) -> Api<'a> {
        Api {
            upstream: &self.upstream,
            provider,
            access_token: token.expose(),
            account,
        }
    }
}

/// Where the grant whose account `named` names is: by id first (ids are the provider's own,
/// unique); else by name, which must then name one account only (organisations' names are
/// theirs to choose, and may repeat).
fn named_grant(grants: &[(GrantKey, Grant)], named: &str) -> Option<usize> {
    let account_of = |g: &Grant| g.tokens.account.clone();
    let by_id = grants
        .iter()
        .position(|(_, g)| account_of(g).is_some_and(|a| a.id == named));
    let mut by_name = grants
        .iter()
        .enumerate()
        .filter(|(_, (_, g))| account_of(g).is_some_and(|a| a.name.eq_ignore_ascii_case(named)));
    by_id.or_else(|| match (by_name.next(), by_name.next()) {
        (Some((at, _)), None) => Some(at),
        _ => None,
    })
}

/// The key of the caller's grant at a provider without accounts (or of the sign-in a call
/// asks for when none is connected).
pub(crate) fn key(principal: &Principal, provider: &Provider) -> GrantKey {
    GrantKey::sole(principal, &provider.id)
}
