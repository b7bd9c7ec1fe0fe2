//! What the browser routes work with: the pages' share of the state, taken once when the
//! routes are built. The pages reach no held retry, task, legacy session, outbox or replica
//! record: only the sign-in's parts (attempts, opened-link marks, the sealer, the provider's
//! OAuth client), who the browser's person is, their connections, and the limits.

use std::sync::Arc;

use crate::blocklist::Blocklist;
use crate::config::Config;
use crate::connections::Connections;
use crate::flows::{FlowBackend, SignInsEnded};
use crate::identity::Identity;
use crate::leases::LeaseBackend;
use crate::limits::Limiter;
use crate::providers::Catalog;
use crate::seal::Sealer;
use crate::state::AppState;

/// The pages' services; cheap to clone (one `Arc`), as each request's extractor does.
#[derive(Clone)]
pub(crate) struct PageServices(Arc<Services>);

/// See [`PageServices`].
pub(crate) struct Services {
    pub(crate) config: Config,
    pub(crate) sealer: Arc<Sealer>,
    /// Who the browser's person is (the login, the session cookie).
    pub(crate) identity: Identity,
    pub(crate) catalog: Catalog,
    /// A person's connections: listed, used to name an account, disconnected.
    pub(crate) connections: Connections,
    /// Sign-in attempts: written when the browser leaves for the provider, claimed once by
    /// the callback.
    pub(crate) flows: Arc<dyn FlowBackend>,
    /// Single-use marks (an opened link, a used login state).
    pub(crate) leases: Arc<dyn LeaseBackend>,
    /// The client of the providers' token endpoints.
    pub(crate) http: reqwest::Client,
    /// Told when a sign-in ends here, for the retries held on this replica.
    pub(crate) sign_ins_ended: SignInsEnded,
    /// The MCP clients refused the use of connections, named on the connections page.
    pub(crate) blocklist: Arc<Blocklist>,
    pub(crate) limiter: Limiter,
}

impl PageServices {
    /// The pages' share of `state`.
    pub(crate) fn taken_from(state: &AppState) -> Self {
        Self(Arc::new(Services {
            config: state.config.clone(),
            sealer: state.sealer.clone(),
            identity: state.identity.clone(),
            catalog: state.catalog.clone(),
            connections: state.connections.clone(),
            flows: state.flows.clone(),
            leases: state.leases.clone(),
            http: state.http.clone(),
            sign_ins_ended: state.sign_ins_ended.clone(),
            blocklist: state.blocklist.clone(),
            limiter: state.limiter.clone(),
        }))
    }
}

impl std::ops::Deref for PageServices {
    type Target = Services;
    fn deref(&self) -> &Services {
        &self.0
    }
}
