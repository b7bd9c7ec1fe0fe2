//! Configuration: command-line flags, environment variables and a TOML file, validated once at
//! start. Precedence: flag or environment variable, then the `--config` file, then the default.
//! `options` declares each option once; `Config::resolve` checks them against each other. Every
//! error names the setting at fault, as the user would spell it.

pub(crate) mod admin;
mod cli;
pub(crate) mod events;
mod file;
mod identity;
mod options;
mod unechoed;
mod values;
pub(crate) mod webhooks;

pub(crate) use cli::{Cli, Command, KeysCommand};
pub(crate) use cli::{IdentityMode, LogFormat, NoUrlElicitation};
pub(crate) use grantry_bridge::BridgeArgs;
pub(crate) use identity::{OidcSettings, ToolScopes};
pub use options::ServeArgs;

use crate::telemetry::Export;
pub(crate) use values::ClaimMatch;
pub(crate) use values::{Origin, PublicUrl};

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::providers::ProviderId;
use crate::store::StoreUrl;

/// A setting that cannot be used, named as the user wrote it.
#[derive(Debug, thiserror::Error)]
#[error("{setting}: {message}")]
pub struct ConfigError {
    pub(crate) setting: String,
    pub(crate) message: String,
}

fn bad(setting: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        setting: setting.to_owned(),
        message: message.into(),
    }
}

/// Rate limits and quotas; each counter is per minute and shared across replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) mcp_per_principal: u32,
    pub(crate) mcp_per_ip: u32,
    pub(crate) browser_per_ip: u32,
    /// Requests to the demo provider per client address.
    pub(crate) demo_per_ip: u32,
    /// Peers whose `X-Forwarded-For` is believed.
    pub(crate) trusted_proxies: Vec<ipnet::IpNet>,
    pub(crate) max_pending_flows: u32,
}

/// What the listener allows each connection (see `server`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConnectionLimits {
    pub(crate) header_read_timeout: Duration,
    pub(crate) body_read_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    /// `None`: derived from the open-file limit at start.
    pub(crate) max_connections: Option<usize>,
    pub(crate) max_connections_per_address: usize,
}

/// Validated settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) listen: SocketAddr,
    /// Public base URL; shown without a trailing slash, e.g. `http://127.0.0.1:8080`.
    pub(crate) public_url: PublicUrl,
    pub(crate) data_dir: PathBuf,
    pub(crate) store: StoreUrl,
    pub(crate) store_prefix: String,
    pub(crate) allow_volatile_store: bool,
    /// Replicas a Redis store's writes that a person is told about must reach.
    pub(crate) redis_replication: crate::store::Replication,
    pub(crate) identity: IdentityMode,
    /// Present exactly when `identity` is oidc.
    pub(crate) oidc: Option<OidcSettings>,
    pub(crate) limits: Limits,
    pub(crate) providers_file: Option<PathBuf>,
    /// Catalog ids allowed plain http to hosts that are not loopback (test setups).
    pub(crate) allow_insecure_providers: Vec<ProviderId>,
    pub(crate) retry_hold: Duration,
    /// Between a held retry's reads of the store (events wake it sooner).
    pub(crate) hold_poll_interval: Duration,
    /// How long a held retry waits for its sign-in link to be opened at all.
    pub(crate) unopened_link_wait: Duration,
    /// How long a legacy-era `elicitation/create` question waits for its answer.
    pub(crate) elicitation_timeout: Duration,
    /// Legacy-era sessions this process keeps in memory at once.
    pub(crate) max_legacy_sessions: usize,
    /// Of those, the most one principal may have.
    pub(crate) max_legacy_sessions_per_principal: usize,
    /// Legacy-era sessions one principal keeps in the store; past it the least recently used
    /// is forgotten.
    pub(crate) max_stored_legacy_sessions_per_principal: usize,
    /// Retries and legacy GET streams held open at once by this process.
    pub(crate) max_held_retries: usize,
    /// Of those, the most one principal may have.
    pub(crate) max_held_retries_per_principal: usize,
    /// Keys from configuration; `None` means "use or create the data directory's key".
    pub(crate) keys: Option<SealingKeys>,
    /// A data-directory key file others may read is only warned about.
    pub(crate) allow_readable_key_file: bool,
    pub(crate) request_state_ttl_secs: i64,
    pub(crate) demo: bool,
    pub(crate) demo_token_ttl_secs: i64,
    pub(crate) allowed_origins: Vec<String>,
    /// Benchmarks: the demo adapter calls the demo API in-process, not over HTTP.
    pub(crate) demo_api_in_process: bool,
    pub(crate) no_url_elicitation: NoUrlElicitation,
    pub(crate) log_format: LogFormat,
    /// Where traces go, if anywhere.
    pub(crate) traces: Option<Export>,
    /// What people see: the deployment's name, logo, colour and support link.
    pub(crate) brand: std::sync::Arc<crate::ui::Brand>,
    /// The language of person-facing MCP messages, and of pages a browser asks in no
    /// language grantry speaks.
    pub(crate) default_language: crate::ui::Lang,
    pub(crate) connections: ConnectionLimits,
    pub(crate) lifecycle: Lifecycle,
}

/// Connection lifecycle: where events go, how deliveries are retried, the keep-alive.
#[derive(Debug, Clone)]
pub(crate) struct Lifecycle {
    pub(crate) endpoints: Vec<webhooks::Endpoint>,
    pub(crate) retries: webhooks::RetrySchedule,
    /// Undelivered deliveries kept per endpoint; past it the oldest parked go first.
    pub(crate) max_undelivered: u64,
    /// `None`: no background refreshes.
    pub(crate) keepalive: Option<KeepAlive>,
    pub(crate) expiry_warning_secs: i64,
}

/// The keep-alive scheduler's pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepAlive {
    pub interval: Duration,
    pub concurrency: usize,
    /// Refreshes per second per provider.
    pub rate_per_provider: u32,
}

impl Config {
    /// The canonical MCP URL: the audience of every sealed value.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.public_url)
    }

    /// The OAuth redirect URI registered with every provider.
    pub(crate) fn redirect_uri(&self) -> String {
        format!("{}/oauth/callback", self.public_url)
    }

    /// Whether the public URL is https (then cookies carry `Secure` and the `__Host-` prefix).
    pub(crate) fn is_https(&self) -> bool {
        self.public_url.is_https()
    }

    /// Checks the parsed options against each other and fills the defaults that depend on
    /// others (the public URL, the store, the demo).
    pub fn resolve(args: ServeArgs) -> Result<Self, ConfigError> {
        let public_url = args
            .public_url
            .clone()
            .unwrap_or_else(|| PublicUrl::of_listen_address(args.listen));
        identity::check_dev(args.identity, args.listen, &public_url)?;
        let oidc = identity::resolve(&args, &public_url)?;
        let keys = keys(&args)?;
        let store = args
            .store
            .clone()
            .unwrap_or_else(|| StoreUrl::sqlite_in(&args.data_dir));
        let lifecycle = lifecycle(&args, |name| std::env::var(name).ok())?;
        let brand = brand(&args)?;
        let redis_replication = redis_replication(&args, &store)?;
        Ok(Self {
            brand,
            default_language: args.default_language,
            lifecycle,
            limits: limits(&args),
            connections: connections(&args),
            listen: args.listen,
            public_url,
            store,
            data_dir: args.data_dir,
            store_prefix: args.store_prefix,
            allow_volatile_store: args.allow_volatile_store,
            redis_replication,
            identity: args.identity,
            oidc,
            providers_file: args.providers,
            allow_insecure_providers: args.allow_insecure_provider.unwrap_or_default().0,
            retry_hold: args.retry_hold,
            hold_poll_interval: args.hold_poll_interval,
            unopened_link_wait: args.unopened_link_wait,
            elicitation_timeout: args.elicitation_timeout,
            max_legacy_sessions: args.max_legacy_sessions,
            max_legacy_sessions_per_principal: args.max_legacy_sessions_per_principal,
            max_stored_legacy_sessions_per_principal: args.max_stored_legacy_sessions_per_principal,
            max_held_retries: args.max_held_retries,
            max_held_retries_per_principal: args.max_held_retries_per_principal,
            keys,
            allow_readable_key_file: args.allow_readable_key_file,
            request_state_ttl_secs: whole_seconds(args.request_state_ttl),
            // The demo's client secret is public: on by default only for the local user.
            demo: args.demo.unwrap_or(args.identity == IdentityMode::Dev),
            demo_token_ttl_secs: whole_seconds(args.demo_token_ttl),
            allowed_origins: origins(args.allowed_origins),
            demo_api_in_process: args.demo_api_in_process,
            no_url_elicitation: args.no_url_elicitation,
            log_format: args.log_format,
            traces: trace_export(args.otlp_endpoint),
        })
    }
}

/// Where traces go: `--otlp-endpoint` if given, else the standard variables if they name an
/// endpoint (and neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` turns traces
/// off); `None`: nowhere.
fn trace_export(endpoint: Option<url::Url>) -> Option<Export> {
    if let Some(url) = endpoint {
        return Some(Export::Endpoint(url));
    }
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let says = |name: &str, value: &str| {
        std::env::var(name).is_ok_and(|v| v.trim().eq_ignore_ascii_case(value))
    };
    let named = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") || set("OTEL_EXPORTER_OTLP_ENDPOINT");
    let off = says("OTEL_SDK_DISABLED", "true") || says("OTEL_TRACES_EXPORTER", "none");
    (named && !off).then_some(Export::FromEnvironment)
}

/// The brand as the options give it, its logo read and checked now.
/// `--redis-min-replicas`, for a Redis store only.
fn redis_replication(
    args: &ServeArgs,
    store: &StoreUrl,
) -> Result<crate::store::Replication, ConfigError> {
    if args.redis_min_replicas > 0 && !matches!(store, StoreUrl::Redis(_)) {
        return Err(bad(
            "--redis-min-replicas",
            format!("waits for Redis replicas, but the store is {store}"),
        ));
    }
    Ok(crate::store::Replication {
        min_replicas: args.redis_min_replicas,
        timeout: std::time::Duration::from_millis(args.redis_min_replicas_timeout),
    })
}

fn brand(args: &ServeArgs) -> Result<std::sync::Arc<crate::ui::Brand>, ConfigError> {
    let logo = match &args.brand_logo {
        Some(path) => Some(crate::ui::brand::Logo::load(path).map_err(|e| {
            bad(
                "--brand-logo (GRANTRY_BRAND_LOGO)",
                format!("{}: {e}", path.display()),
            )
        })?),
        None => None,
    };
    Ok(std::sync::Arc::new(crate::ui::Brand {
        name: args.brand_name.clone(),
        logo,
        color: args.brand_color,
        support_url: args.support_url.clone(),
    }))
}

fn limits(args: &ServeArgs) -> Limits {
    Limits {
        mcp_per_principal: args.rate_mcp_principal,
        mcp_per_ip: args.rate_mcp_ip,
        browser_per_ip: args.rate_browser_ip,
        demo_per_ip: args.rate_demo_ip,
        trusted_proxies: args
            .trusted_proxies
            .iter()
            .flat_map(|list| list.0.iter().map(|range| range.0))
            .collect(),
        max_pending_flows: args.max_pending_flows,
    }
}

fn lifecycle(
    args: &ServeArgs,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Lifecycle, ConfigError> {
    let targets = args.webhook_url.clone().unwrap_or_default().0;
    Ok(Lifecycle {
        endpoints: webhooks::resolve(&targets, var)?,
        retries: args.webhook_retries.clone(),
        max_undelivered: args.webhook_max_undelivered as u64,
        keepalive: args.keepalive.then_some(KeepAlive {
            interval: args.keepalive_interval,
            concurrency: args.keepalive_concurrency,
            rate_per_provider: args.keepalive_rate,
        }),
        expiry_warning_secs: i64::from(args.expiry_warning) * 86_400,
    })
}

fn connections(args: &ServeArgs) -> ConnectionLimits {
    ConnectionLimits {
        header_read_timeout: args.header_read_timeout,
        body_read_timeout: args.body_read_timeout,
        idle_timeout: args.idle_timeout,
        max_connections: args.max_connections,
        max_connections_per_address: args.max_connections_per_address,
    }
}

/// The sealing keys given (`--keys`), base64url; `Debug` says how many, never one.
#[derive(Clone)]
pub(crate) struct SealingKeys(pub Vec<String>);

impl std::fmt::Debug for SealingKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealingKeys({} keys)", self.0.len())
    }
}

/// The configured sealing keys, each checked to be one.
fn keys(args: &ServeArgs) -> Result<Option<SealingKeys>, ConfigError> {
    let Some(list) = &args.keys else {
        return Ok(None);
    };
    crate::seal::KeyRing::from_encoded(&list.0)
        .map_err(|e| bad("--keys (GRANTRY_KEYS)", e.to_string()))?;
    Ok(Some(SealingKeys(list.0.clone())))
}

fn origins(list: Option<values::CommaList<Origin>>) -> Vec<String> {
    list.unwrap_or_default()
        .0
        .iter()
        .map(|origin| origin.as_str().to_owned())
        .collect()
}

/// Seconds as the sealed values count them (parsed ranges keep them far below `i64::MAX`).
fn whole_seconds(duration: Duration) -> i64 {
    i64::try_from(duration.as_secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
