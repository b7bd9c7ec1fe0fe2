//! The shared state every route and tool works with, built once at start.

use std::path::Path;
use std::sync::Arc;

use crate::config::Config;
use crate::demo::{DemoConfig, DemoProvider};
use crate::flows::FlowBackend;
use crate::grants::{GrantEvents, Grants};
use crate::identity::Identity;
use crate::limits::Limiter;
use crate::providers::Catalog;
use crate::seal::{KeyRing, Sealer};
use crate::store::{self, Stores};

/// Cheap to clone: everything is behind an `Arc`.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

pub struct Inner {
    pub config: Config,
    pub sealer: Arc<Sealer>,
    pub flows: Arc<dyn FlowBackend>,
    pub grants: Grants,
    pub catalog: Catalog,
    pub http: reqwest::Client,
    pub identity: Identity,
    pub limiter: Limiter,
    pub leases: Arc<dyn crate::leases::LeaseBackend>,
    /// Legacy-era MCP sessions (see [`crate::sessions`]).
    pub sessions: Arc<dyn crate::sessions::SessionBackend>,
    pub demo: Option<DemoProvider>,
    /// Places for retries held open while a sign-in is pending, shared fairly by principal
    /// (keyed by the principal's tag).
    pub held_retries: Arc<crate::quota::Quota<String>>,
    /// Turns for held retries to read the store, and once woken to run their tool: when one
    /// sign-in wakes thousands of retries at once, they take turns in memory instead of all
    /// queueing at the store's pool (which gives up after a few seconds).
    pub hold_turns: tokio::sync::Semaphore,
    /// The demo billing API as a router, when `--demo-api-in-process` asks for it.
    pub in_process_api: Option<axum::Router>,
    /// Renders `/metrics`.
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
}

/// Held retries that may use the store at once (a few times the largest pool).
const HOLD_TURNS: usize = 32;

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.inner
    }
}

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
}

impl AppState {
    /// Opens the store, loads keys and the provider catalog.
    pub async fn build(config: Config) -> Result<Self, StartError> {
        prepare_data_dir(&config.data_dir)?;
        let ring = load_key_ring(&config)?;
        let sealer = Arc::new(Sealer::new(ring, config.mcp_url()));
        let Stores {
            flows,
            grants,
            bus,
            counters,
            leases,
            sessions,
        } = {
            // The store and the durability check each open a connection: side by side, start-up
            // waits for one connection's set-up (a TLS handshake, on PostgreSQL), not two.
            let (stores, durable) = tokio::join!(
                store::open_with_prefix(&config.store, &config.store_prefix),
                store::durability::check(&config.store, config.allow_volatile_store),
            );
            let stores = stores?;
            durable?;
            stores
        };
        check_no_key_retired_in_use(&sealer, grants.as_ref()).await?;
        let demo_base = format!("{}/demo", config.public_url);
        let http = crate::providers::http::client();
        let mut catalog = Catalog::load(
            config.demo.then_some(demo_base.as_str()),
            config.providers_file.as_deref(),
            &config.allow_insecure_providers,
        )?;
        catalog.settle_pkce(&http).await;
        let demo = config.demo.then(|| {
            let demo_config = DemoConfig {
                access_token_ttl_secs: config.demo_token_ttl_secs,
                ..DemoConfig::new(demo_base.clone(), vec![config.redirect_uri()])
            };
            DemoProvider::new(demo_config, sealer.clone())
        });
        let identity = Identity::start(&config, http.clone()).await?;
        let limiter = Limiter::start(counters, config.limits.clone());
        let in_process_api = demo
            .as_ref()
            .filter(|_| config.demo_api_in_process)
            .map(|demo| axum::Router::new().nest("/demo", demo.router()));
        Ok(Self {
            inner: Arc::new(Inner {
                grants: Grants::new(grants, sealer.clone(), GrantEvents::new(bus)),
                flows,
                sealer,
                catalog,
                http,
                identity,
                limiter,
                leases,
                sessions,
                demo,
                held_retries: crate::quota::Quota::new(
                    config.max_held_retries,
                    config.max_held_retries_per_principal,
                ),
                hold_turns: tokio::sync::Semaphore::new(HOLD_TURNS),
                metrics: crate::metrics::install(),
                in_process_api,
                config,
            }),
        })
    }
}

/// The data directory, made (or kept) private to grantry's user.
fn prepare_data_dir(dir: &Path) -> Result<(), StartError> {
    crate::data_dir::prepare(dir).map_err(|e| {
        StartError::Keys(format!(
            "--data-dir (GRANTRY_DATA_DIR): cannot make {} private to this user: {e}",
            dir.display()
        ))
    })
}

/// The grants of `config`'s store, sealed with its keys: for `grantry keys` commands.
pub async fn maintenance_grants(config: &Config) -> Result<Grants, StartError> {
    prepare_data_dir(&config.data_dir)?;
    let ring = load_key_ring(config)?;
    let sealer = Arc::new(Sealer::new(ring, config.mcp_url()));
    let stores = store::open_with_prefix(&config.store, &config.store_prefix).await?;
    Ok(Grants::new(stores.grants, sealer, GrantEvents::new(None)))
}

/// Refuses to run when some grants are sealed under a key the ring no longer holds: those
/// grants would be lost to their users. Says how many, and how to retire a key safely.
async fn check_no_key_retired_in_use(
    sealer: &Sealer,
    grants: &dyn crate::grants::GrantBackend,
) -> Result<(), StartError> {
    let known = sealer.key_ring().key_ids();
    let orphaned: Vec<String> = grants
        .key_usage()
        .await?
        .into_iter()
        .filter(|(id, _)| !id.is_empty() && !known.contains(id))
        .map(|(id, count)| format!("{count} grant(s) under key {id}"))
        .collect();
    if orphaned.is_empty() {
        return Ok(());
    }
    Err(StartError::Keys(format!(
        "{} are sealed with a key GRANTRY_KEYS no longer holds. Put that key back (after the \
         new one), run `grantry keys rewrap`, and retire it only when `grantry keys status` \
         shows it unused",
        orphaned.join(", ")
    )))
}

const KEY_FILE: &str = "sealing.key";

/// Keys from configuration, or the data directory's own key (generated on first start).
fn load_key_ring(config: &Config) -> Result<KeyRing, StartError> {
    if let Some(keys) = &config.keys {
        return KeyRing::from_encoded(keys).map_err(|e| StartError::Keys(e.to_string()));
    }
    let path = config.data_dir.join(KEY_FILE);
    let encoded = match std::fs::read_to_string(&path) {
        Ok(text) => {
            check_key_file_mode(&path, config.allow_readable_key_file)?;
            text
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = crate::seal::generate_key();
            write_private(&path, &key)?;
            tracing::warn!(
                path = %path.display(),
                "no sealing key configured: generated one and saved it with mode 0600; \
                 replicas must share keys, so set GRANTRY_KEYS when you run more than one"
            );
            key
        }
        Err(e) => {
            return Err(StartError::Keys(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let keys: Vec<&str> = encoded.lines().filter(|l| !l.trim().is_empty()).collect();
    KeyRing::from_encoded(&keys).map_err(|e| StartError::Keys(format!("{}: {e}", path.display())))
}

/// A key file others may read is refused, as SSH refuses such a private key: whoever reads
/// it can open every grant. `allow` turns the refusal into a warning.
fn check_key_file_mode(path: &Path, allow: bool) -> Result<(), StartError> {
    let mode = crate::data_dir::readable_by_others(path)
        .map_err(|e| StartError::Keys(format!("cannot read {}: {e}", path.display())))?;
    let Some(mode) = mode else {
        return Ok(());
    };
    if allow {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{mode:o}"),
            "the sealing key file is readable by group or others (--allow-readable-key-file)"
        );
        return Ok(());
    }
    Err(StartError::Keys(format!(
        "{} is readable by group or others (mode {mode:o}): whoever can read it can open every \
         grant. Run `chmod 600 {}` (or start with --allow-readable-key-file)",
        path.display(),
        path.display()
    )))
}

fn write_private(path: &Path, contents: &str) -> Result<(), StartError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| StartError::Keys(format!("cannot create {}: {e}", path.display())))?;
    writeln!(file, "{contents}")
        .map_err(|e| StartError::Keys(format!("cannot write {}: {e}", path.display())))
}
