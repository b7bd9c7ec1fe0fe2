//! What an operator does to connections and people from the command line (`grantry
//! connections`, `grantry users`, `grantry clients`): see what is connected ([`Admin::list`]),
//! revoke it ([`Admin::revoke`]), erase a person ([`Admin::forget`]), and refuse one MCP
//! client the use of connections ([`Admin::block`]). Each works on any store, through
//! the same services the routes use, so a revocation writes its lifecycle event and asks the
//! provider exactly as a person's own disconnect does.
//!
//! Bad input changes nothing: the provider and the person are checked before anything is
//! written ([`AdminError`] says which, with the exit code the command ends with).

mod clients;
mod forget;
mod revoke;
mod view;

pub(crate) use clients::SeenAs;
pub(crate) use revoke::{Outcome, Revoked};
pub(crate) use view::Listed;

use std::sync::Arc;

use crate::blocklist::BlocklistBackend;
use crate::connections::Connections;
use crate::flows::FlowBackend;
use crate::grants::{Found, GrantKey, State};
use crate::identity::Principal;
use crate::ids::ProviderId;
use crate::limits::CounterBackend;
use crate::outbox::OutboxBackend;
use crate::providers::Catalog;
use crate::sessions::SessionBackend;
use crate::store::StoreError;
use crate::tasks::TaskBackend;

/// Why an operator's command did nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AdminError {
    /// `--provider` names no configured provider.
    #[error("--provider: no provider `{given}` is configured (configured: {configured})")]
    UnknownProvider { given: String, configured: String },
    /// The person has nothing here (or nothing at that provider).
    #[error("nothing is stored for {0}")]
    UnknownUser(String),
    /// `clients unblock` of a client that is not blocked.
    #[error("the client `{0}` is not blocked")]
    NotBlocked(String),
    #[error("the store: {0}")]
    Store(#[from] StoreError),
}

impl AdminError {
    /// The exit code: 2 for a bad argument, 3 for a person with nothing stored, 1 otherwise.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::UnknownProvider { .. } => 2,
            Self::UnknownUser(_) | Self::NotBlocked(_) => 3,
            Self::Store(_) => 1,
        }
    }
}

/// Which connections a command is about.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub(crate) user: Option<Principal>,
    pub(crate) provider: Option<ProviderId>,
    pub(crate) state: Option<State>,
}

/// The parts the operators' commands work with, composed by `crate::startup::admin`.
pub(crate) struct Admin {
    pub(crate) connections: Connections,
    pub(crate) catalog: Catalog,
    pub(crate) flows: Arc<dyn FlowBackend>,
    pub(crate) sessions: Arc<dyn SessionBackend>,
    pub(crate) counters: Arc<dyn CounterBackend>,
    pub(crate) outbox: Arc<dyn OutboxBackend>,
    pub(crate) blocklist: Arc<dyn BlocklistBackend>,
    pub(crate) tasks: Arc<dyn TaskBackend>,
    /// Whether calls name a verified MCP client (`oidc` identity); under `dev`, none does,
    /// so a block refuses nobody.
    pub(crate) verifies_clients: bool,
}

impl Admin {
    /// The connections `filter` selects, by person, provider and connection time.
    pub(crate) async fn list(&self, filter: &Filter) -> Result<Vec<Listed>, AdminError> {
        Ok(self
            .selected(filter)
            .await?
            .iter()
            .map(|(key, found)| Listed::of(key, found))
            .collect())
    }

    /// The grants `filter` selects, once its provider is known to be configured.
    async fn selected(&self, filter: &Filter) -> Result<Vec<(GrantKey, Found)>, AdminError> {
        if let Some(provider) = &filter.provider {
            self.check_provider(provider)?;
        }
        let all = self.connections.grants().all(filter.user.as_ref()).await?;
        Ok(all
            .into_iter()
            .filter(|(key, found)| {
                let state = match found {
                    Found::Opened(grant) => Some(grant.state),
                    Found::Unreadable(_) => None,
                };
                filter.provider.as_ref().is_none_or(|p| *p == key.provider)
                    && filter.state.is_none_or(|s| Some(s) == state)
            })
            .collect())
    }

    fn check_provider(&self, provider: &ProviderId) -> Result<(), AdminError> {
        if self.catalog.get(provider).is_some() {
            return Ok(());
        }
        let configured: Vec<String> = self.catalog.all().map(|p| p.id.to_string()).collect();
        Err(AdminError::UnknownProvider {
            given: provider.to_string(),
            configured: configured.join(", "),
        })
    }
}

/// A person as an operator names them: `ISSUER SUBJECT`.
pub(crate) fn describe(principal: &Principal) -> String {
    format!("{} {}", principal.issuer, principal.subject)
}
