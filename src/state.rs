//! The shared state, built once at start (by `startup`): what the program assembles and the few
//! handlers that need most of it see. A tool gets its share (`tools::Services`) and the
//! rounds theirs (`mcp_calls::rounds::Rounds`), lent for each call; the pages theirs
//! (`connect::services`), taken when their routes are built.

use std::sync::Arc;

use crate::blocklist::Blocklist;
use crate::config::Config;
use crate::connections::Connections;
use crate::demo::DemoProvider;
use crate::flows::FlowBackend;
use crate::identity::Identity;
use crate::limits::Limiter;
use crate::providers::Catalog;
use crate::seal::Sealer;

/// Cheap to clone: everything is behind an `Arc`.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

pub struct Inner {
    pub(crate) config: Config,
    pub(crate) sealer: Arc<Sealer>,
    pub(crate) flows: Arc<dyn FlowBackend>,
    /// Told when a sign-in ends on this replica (see [`crate::flows::SignInsEnded`]).
    pub(crate) sign_ins_ended: crate::flows::SignInsEnded,
    /// People's connections: the only way to their grants (see [`crate::connections`]).
    pub(crate) connections: Connections,
    pub(crate) catalog: Catalog,
    pub(crate) http: reqwest::Client,
    pub(crate) identity: Identity,
    pub(crate) limiter: Limiter,
    pub(crate) leases: Arc<dyn crate::leases::LeaseBackend>,
    /// Legacy-era MCP sessions (see [`crate::sessions`]).
    pub(crate) sessions: Arc<dyn crate::sessions::SessionBackend>,
    /// Lifecycle events waiting for delivery (see [`crate::outbox`]).
    pub(crate) outbox: Arc<dyn crate::outbox::OutboxBackend>,
    /// Rung when this replica writes an event, so its deliverer sends it at once.
    pub(crate) outbox_wake: Arc<tokio::sync::Notify>,
    /// The MCP clients refused the use of connections (see [`crate::blocklist`]).
    pub(crate) blocklist: Arc<Blocklist>,
    /// MCP tasks (see [`crate::tasks`]).
    pub(crate) tasks: Arc<dyn crate::tasks::TaskBackend>,
    /// The records of the replicas on this store (see [`crate::replicas`]).
    pub(crate) replicas: Arc<dyn crate::replicas::ReplicaBackend>,
    /// This replica among them, once it joined (a serving process; see `program`).
    pub(crate) membership: std::sync::OnceLock<Arc<crate::replicas::membership::Membership>>,
    pub(crate) demo: Option<DemoProvider>,
    /// Places for requests held open, shared fairly by principal (keyed by the principal's
    /// tag): retries waiting for a sign-in, and legacy-era GET streams.
    pub(crate) held: Arc<crate::quota::Quota<String>>,
    /// Turns for held retries to read the store, and once woken to run their tool: when one
    /// sign-in wakes thousands of retries at once, they take turns in memory instead of all
    /// queueing at the store's pool (which gives up after a few seconds).
    pub(crate) hold_turns: tokio::sync::Semaphore,
    /// Renders `/metrics`.
    pub(crate) metrics: metrics_exporter_prometheus::PrometheusHandle,
}

/// Held retries that may use the store at once (a few times the largest pool).
pub(crate) const HOLD_TURNS: usize = 32;

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.inner
    }
}

impl AppState {
    /// The state around `inner` (built by `startup`).
    pub fn new(inner: Inner) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }
}
