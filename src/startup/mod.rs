//! Start-up: everything composed once, in one place. Opens the store named by `--store` and
//! builds each concern's backend on it ([`stores`]), loads the key ring ([`keys`]) and the
//! provider catalog, starts the identity and the rate limiter, and hands all of it to the
//! routes as one [`AppState`].

mod keys;
mod membership;
mod stores;

pub(crate) use membership::join_replicas;
pub(crate) use stores::open_stores_with;
pub use stores::{Stores, open_stores};

use std::sync::Arc;

use crate::admin::Admin;
use crate::blocklist::Blocklist;
use crate::config::Config;
use crate::connections::{Connections, Lifecycle, LifecycleSettings, TokenKeeper};
use crate::demo::{DemoConfig, DemoProvider};
use crate::grants::{GrantEvents, Grants};
use crate::identity::Identity;
use crate::limits::Limiter;
use crate::providers::{Catalog, Upstream};
use crate::seal::Sealer;
use crate::state::{AppState, HOLD_TURNS, Inner};

/// Why grantry could not start; each names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("{0}")]
    Catalog(#[from] crate::providers::CatalogError),
    #[error("--store (GRANTRY_STORE): {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("sealing keys: {0}")]
    Keys(String),
    #[error("{0}")]
    Identity(#[from] crate::identity::DiscoveryError),
    /// This replica's settings differ from a live replica's on the same store.
    #[error("{0}")]
    Disagrees(crate::replicas::Disagreement),
}

/// Builds the state: opens the store, loads the keys and the provider catalog, starts the
/// identity and the limiter.
pub async fn build(config: Config) -> Result<AppState, StartError> {
    keys::prepare_data_dir(&config.data_dir)?;
    let ring = keys::load_key_ring(&config)?;
    let sealer = Arc::new(Sealer::new(ring, config.mcp_url()));
    let stores = open_durable_stores(&config).await?;
    keys::check_no_key_retired_in_use(&sealer, stores.grants.as_ref()).await?;
    let http = crate::providers::http::client();
    let Offered {
        mut catalog,
        demo,
        upstream,
    } = offered_providers(&config, &sealer, &http).await?;
    // Only a serving replica starts sign-ins: the operators' commands neither read the
    // providers' metadata nor warn of their PKCE.
    catalog.settle_pkce(&http).await;
    let identity = Identity::start(&config, http.clone()).await?;
    let limiter = Limiter::start(stores.counters, config.limits.clone());
    let settings = lifecycle_settings(&config);
    let wake = settings.wake.clone();
    let metrics = crate::metrics::install();
    crate::metrics::held_retries_limit(config.max_held_retries);
    let grants = Grants::new(stores.grants, sealer.clone(), GrantEvents::new(stores.bus));
    let keeper = TokenKeeper {
        lifecycle: Lifecycle::new(grants, settings),
        leases: stores.leases.clone(),
        http: http.clone(),
        redirect_uri: config.redirect_uri().into(),
    };
    Ok(AppState::new(Inner {
        connections: Connections::new(keeper, catalog.clone(), upstream),
        flows: stores.flows,
        sealer,
        catalog,
        http,
        identity,
        limiter,
        leases: stores.leases,
        sessions: stores.sessions,
        outbox: stores.outbox,
        outbox_wake: wake,
        blocklist: Arc::new(Blocklist::new(stores.blocklist)),
        tasks: stores.tasks,
        replicas: stores.replicas,
        membership: std::sync::OnceLock::new(),
        demo,
        held: crate::quota::Quota::new(
            config.max_held_retries,
            config.max_held_retries_per_principal,
        ),
        hold_turns: tokio::sync::Semaphore::new(HOLD_TURNS),
        sign_ins_ended: crate::flows::SignInsEnded::new(),
        metrics,
        config,
    }))
}

/// What the lifecycle writes need from the settings: the endpoints events are queued for,
/// and when to warn of a hard expiry.
fn lifecycle_settings(config: &Config) -> LifecycleSettings {
    LifecycleSettings {
        endpoints: config
            .lifecycle
            .endpoints
            .iter()
            .map(|e| e.name.clone())
            .collect(),
        expiry_warning_secs: config.lifecycle.expiry_warning_secs,
        wake: Arc::default(),
    }
}

/// The store's backends, once the store is known to keep what it acknowledges.
async fn open_durable_stores(config: &Config) -> Result<Stores, StartError> {
    // The store and the durability check each open a connection: side by side, start-up
    // waits for one connection's set-up (a TLS handshake, on PostgreSQL), not two.
    let (stores, durable) = tokio::join!(
        open_stores_with(
            &config.store,
            &config.store_prefix,
            config.redis_replication
        ),
        crate::store::durability::check(&config.store, config.allow_volatile_store),
    );
    let stores = stores?;
    durable?;
    Ok(stores)
}

/// The providers offered, the demo provider when it is on, and how their APIs are reached.
struct Offered {
    catalog: Catalog,
    demo: Option<DemoProvider>,
    upstream: Upstream,
}

async fn offered_providers(
    config: &Config,
    sealer: &Arc<Sealer>,
    http: &reqwest::Client,
) -> Result<Offered, StartError> {
    let demo_base = format!("{}/demo", config.public_url);
    let catalog = Catalog::load(
        config.demo.then_some(demo_base.as_str()),
        config.providers_file.as_deref(),
        &config.allow_insecure_providers,
    )?;
    let demo = config.demo.then(|| {
        let demo_config = DemoConfig {
            access_token_ttl_secs: config.demo_token_ttl_secs,
            ..DemoConfig::new(demo_base.clone(), vec![config.redirect_uri()])
        };
        DemoProvider::new(demo_config, sealer.clone())
    });
    // Benchmarks only: the demo billing API answered inside the process.
    let upstream = match demo.as_ref().filter(|_| config.demo_api_in_process) {
        Some(demo) => Upstream::in_process(
            http.clone(),
            axum::Router::new().nest("/demo", demo.router()),
        ),
        None => Upstream::network(http.clone()),
    };
    Ok(Offered {
        catalog,
        demo,
        upstream,
    })
}

/// The grants of `config`'s store, sealed with its keys: for `grantry keys` commands.
pub async fn maintenance_grants(config: &Config) -> Result<Grants, StartError> {
    keys::prepare_data_dir(&config.data_dir)?;
    let ring = keys::load_key_ring(config)?;
    let sealer = Arc::new(Sealer::new(ring, config.mcp_url()));
    let stores = open_stores(&config.store, &config.store_prefix).await?;
    Ok(Grants::new(stores.grants, sealer, GrantEvents::new(None)))
}

/// The parts of `config`'s deployment the operators' commands work with (`grantry
/// connections`, `grantry users`): its store, keys, providers and webhook endpoints, without
/// the identity, the limiter or any background work.
pub(crate) async fn admin(config: &Config) -> Result<Admin, StartError> {
    keys::prepare_data_dir(&config.data_dir)?;
    let ring = keys::load_key_ring(config)?;
    let sealer = Arc::new(Sealer::new(ring, config.mcp_url()));
    let stores = open_stores(&config.store, &config.store_prefix).await?;
    let http = crate::providers::http::client();
    let Offered {
        catalog, upstream, ..
    } = offered_providers(config, &sealer, &http).await?;
    let grants = Grants::new(stores.grants, sealer, GrantEvents::new(None));
    let keeper = TokenKeeper {
        lifecycle: Lifecycle::new(grants, lifecycle_settings(config)),
        leases: stores.leases,
        http,
        redirect_uri: config.redirect_uri().into(),
    };
    Ok(Admin {
        connections: Connections::new(keeper, catalog.clone(), upstream),
        catalog,
        flows: stores.flows,
        sessions: stores.sessions,
        counters: stores.counters,
        outbox: stores.outbox,
        blocklist: stores.blocklist,
        tasks: stores.tasks,
        verifies_clients: config.identity == crate::config::IdentityMode::Oidc,
    })
}

/// Starts the connection lifecycle's background work: this replica's webhook deliverer and
/// its keep-alive scheduler (whose rounds run one at a time across the replicas).
pub(crate) fn spawn_lifecycle(state: &AppState) {
    let lifecycle = &state.config.lifecycle;
    crate::outbox::deliver::Deliverer::new(
        state.outbox.clone(),
        lifecycle.endpoints.clone(),
        lifecycle.retries.clone(),
        state.outbox_wake.clone(),
        lifecycle.max_undelivered,
    )
    .spawn();
    if let Some(pace) = lifecycle.keepalive {
        crate::connections::keepalive::KeepAlive::new(
            state.connections.tokens().clone(),
            state.catalog.all().cloned().collect(),
            pace,
            lifecycle.expiry_warning_secs,
        )
        .spawn();
    }
}
