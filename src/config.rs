//! Configuration: command-line flags, environment variables and a TOML file, validated once at
//! start. Precedence: flag or environment variable, then the `--config` file, then the default.
//! Every error names the setting at fault, as the user would spell it.

mod cli;

mod identity;

pub use cli::{
    Cli, Command, IdentityMode, KeysCommand, LogFormat, NoUrlElicitation, Secret, ServeArgs,
};
pub use identity::OidcSettings;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use url::Url;

/// The same settings as read from the `--config` TOML file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    listen: Option<String>,
    public_url: Option<String>,
    data_dir: Option<PathBuf>,
    store: Option<String>,
    store_prefix: Option<String>,
    allow_volatile_store: Option<bool>,
    identity: Option<IdentityMode>,
    oidc_issuer: Option<String>,
    oidc_client_id: Option<String>,
    oidc_scopes: Option<Vec<String>>,
    rate_mcp_principal: Option<u32>,
    rate_mcp_ip: Option<u32>,
    rate_browser_ip: Option<u32>,
    rate_demo_ip: Option<u32>,
    trusted_proxies: Option<Vec<String>>,
    max_pending_flows: Option<u32>,
    providers: Option<PathBuf>,
    allow_insecure_provider: Option<Vec<String>>,
    retry_hold: Option<u64>,
    elicitation_timeout: Option<u64>,
    max_legacy_sessions: Option<usize>,
    max_legacy_sessions_per_principal: Option<usize>,
    max_held_retries: Option<u32>,
    max_held_retries_per_principal: Option<u32>,
    keys: Option<Vec<String>>,
    allow_readable_key_file: Option<bool>,
    request_state_ttl: Option<u64>,
    demo: Option<bool>,
    demo_token_ttl: Option<i64>,
    allowed_origins: Option<Vec<String>>,
    demo_api_in_process: Option<bool>,
    mcp_direct_path: Option<bool>,
    no_url_elicitation: Option<NoUrlElicitation>,
    log_format: Option<LogFormat>,
    header_read_timeout: Option<u64>,
    body_read_timeout: Option<u64>,
    idle_timeout: Option<u64>,
    max_connections: Option<usize>,
    max_connections_per_address: Option<usize>,
}

/// A setting that cannot be used, named as the user wrote it.
#[derive(Debug, thiserror::Error)]
#[error("{setting}: {message}")]
pub struct ConfigError {
    pub setting: String,
    pub message: String,
}

fn bad(setting: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        setting: setting.to_owned(),
        message: message.into(),
    }
}

/// Rate limits and quotas; each counter is per minute and shared across replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub mcp_per_principal: u32,
    pub mcp_per_ip: u32,
    pub browser_per_ip: u32,
    /// Requests to the demo provider per client address.
    pub demo_per_ip: u32,
    /// Peers whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    pub max_pending_flows: u32,
}

/// What the listener allows each connection (see `server`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
    pub idle_timeout: Duration,
    /// `None`: derived from the open-file limit at start.
    pub max_connections: Option<usize>,
    pub max_connections_per_address: usize,
}

/// Validated settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// Public base URL without a trailing slash, e.g. `http://127.0.0.1:8080`.
    pub public_url: String,
    pub data_dir: PathBuf,
    pub store: String,
    pub store_prefix: String,
    pub allow_volatile_store: bool,
    pub identity: IdentityMode,
    /// Present exactly when `identity` is oidc.
    pub oidc: Option<OidcSettings>,
    pub limits: Limits,
    pub providers_file: Option<PathBuf>,
    /// Catalog ids allowed plain http to hosts that are not loopback (test setups).
    pub allow_insecure_providers: Vec<String>,
    pub retry_hold: Duration,
    /// How long a legacy-era `elicitation/create` question waits for its answer.
    pub elicitation_timeout: Duration,
    /// Legacy-era sessions this process keeps in memory at once.
    pub max_legacy_sessions: usize,
    /// Of those, the most one principal may have.
    pub max_legacy_sessions_per_principal: usize,
    /// Retries held open at once by this process; past it a retry is answered at once.
    pub max_held_retries: usize,
    /// Of those, the most one principal may have.
    pub max_held_retries_per_principal: usize,
    /// Keys from configuration; `None` means "use or create the data directory's key".
    pub keys: Option<Vec<String>>,
    /// A data-directory key file others may read is only warned about.
    pub allow_readable_key_file: bool,
    pub request_state_ttl_secs: i64,
    pub demo: bool,
    pub demo_token_ttl_secs: i64,
    pub allowed_origins: Vec<String>,
    /// Benchmarks: the demo adapter calls the demo API in-process, not over HTTP.
    pub demo_api_in_process: bool,
    /// `/mcp` answers the common requests directly (see `mcp::direct`); `false`: all via rmcp.
    pub mcp_direct_path: bool,
    pub no_url_elicitation: NoUrlElicitation,
    pub log_format: LogFormat,
    pub connections: ConnectionLimits,
}

impl Config {
    /// The canonical MCP URL: the audience of every sealed value.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.public_url)
    }

    /// The OAuth redirect URI registered with every provider.
    pub fn redirect_uri(&self) -> String {
        format!("{}/oauth/callback", self.public_url)
    }

    /// Whether the public URL is https (then cookies carry `Secure` and the `__Host-` prefix).
    pub fn is_https(&self) -> bool {
        self.public_url.starts_with("https://")
    }

    /// Resolves flags and environment (already in `args`) over the TOML file over defaults.
    pub fn resolve(args: ServeArgs) -> Result<Self, ConfigError> {
        let file = match &args.config {
            Some(path) => read_file_settings(path)?,
            None => FileSettings::default(),
        };
        let connections = resolve_connections(&args, &file)?;
        let listen_text = args
            .listen
            .or(file.listen)
            .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
        let listen: SocketAddr = listen_text.parse().map_err(|_| {
            bad(
                "--listen (GRANTRY_LISTEN)",
                format!("`{listen_text}` is not an address such as 127.0.0.1:8080"),
            )
        })?;
        let identity = args.identity.or(file.identity).unwrap_or(IdentityMode::Dev);
        let public_url = resolve_public_url(args.public_url.or(file.public_url), listen)?;
        identity::check_dev(identity, listen, &public_url)?;
        let oidc = match identity {
            IdentityMode::Dev => None,
            IdentityMode::Oidc => Some(OidcSettings::resolve(
                args.oidc_issuer.or(file.oidc_issuer),
                args.oidc_client_id.or(file.oidc_client_id),
                args.oidc_client_secret.map(|s| s.0),
                match (args.oidc_scopes, file.oidc_scopes) {
                    (Some(text), _) => split_list(&text),
                    (None, list) => list.unwrap_or_default(),
                },
                &public_url,
            )?),
        };
        let limits = Limits {
            mcp_per_principal: positive(
                "--rate-mcp-principal",
                args.rate_mcp_principal.or(file.rate_mcp_principal),
                600,
            )?,
            mcp_per_ip: positive("--rate-mcp-ip", args.rate_mcp_ip.or(file.rate_mcp_ip), 1200)?,
            browser_per_ip: positive(
                "--rate-browser-ip",
                args.rate_browser_ip.or(file.rate_browser_ip),
                60,
            )?,
            demo_per_ip: positive(
                "--rate-demo-ip",
                args.rate_demo_ip.or(file.rate_demo_ip),
                600,
            )?,
            trusted_proxies: parse_proxies(match (args.trusted_proxies, file.trusted_proxies) {
                (Some(text), _) => split_list(&text),
                (None, list) => list.unwrap_or_default(),
            })?,
            max_pending_flows: positive(
                "--max-pending-flows",
                args.max_pending_flows.or(file.max_pending_flows),
                5,
            )?,
        };
        let data_dir = args
            .data_dir
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from("./grantry-data"));
        let store = args
            .store
            .or(file.store)
            .unwrap_or_else(|| format!("sqlite://{}", data_dir.join("grantry.db").display()));
        let scheme = store.split(':').next().unwrap_or_default();
        if !matches!(
            scheme,
            "sqlite" | "postgres" | "postgresql" | "redis" | "rediss"
        ) {
            return Err(bad(
                "--store (GRANTRY_STORE)",
                format!(
                    "`{scheme}` is not a store: use sqlite://PATH, postgres://… or redis://… (rediss://…)"
                ),
            ));
        }
        let keys = match (args.keys, file.keys) {
            (Some(text), _) => Some(split_list(&text)),
            (None, Some(list)) => Some(list),
            (None, None) => None,
        };
        if let Some(list) = &keys {
            crate::seal::KeyRing::from_encoded(list)
                .map_err(|e| bad("--keys (GRANTRY_KEYS)", e.to_string()))?;
        }
        let request_state_ttl = args
            .request_state_ttl
            .or(file.request_state_ttl)
            .unwrap_or(600);
        if !(30..=86_400).contains(&request_state_ttl) {
            return Err(bad(
                "--request-state-ttl (GRANTRY_REQUEST_STATE_TTL)",
                "must be between 30 and 86400 seconds",
            ));
        }
        let retry_hold = args.retry_hold.or(file.retry_hold).unwrap_or(45);
        if retry_hold > 300 {
            return Err(bad(
                "--retry-hold (GRANTRY_RETRY_HOLD)",
                "must be at most 300 seconds (clients give up on a round after about 60)",
            ));
        }
        let elicitation_timeout = args
            .elicitation_timeout
            .or(file.elicitation_timeout)
            .unwrap_or(300);
        if !(1..=3600).contains(&elicitation_timeout) {
            return Err(bad(
                "--elicitation-timeout (GRANTRY_ELICITATION_TIMEOUT)",
                "must be between 1 and 3600 seconds",
            ));
        }
        let max_legacy_sessions = args
            .max_legacy_sessions
            .or(file.max_legacy_sessions)
            .unwrap_or(2048);
        if max_legacy_sessions == 0 {
            return Err(bad(
                "--max-legacy-sessions (GRANTRY_MAX_LEGACY_SESSIONS)",
                "must be at least 1",
            ));
        }
        let max_legacy_sessions_per_principal = args
            .max_legacy_sessions_per_principal
            .or(file.max_legacy_sessions_per_principal)
            .unwrap_or(32);
        if max_legacy_sessions_per_principal == 0 {
            return Err(bad(
                "--max-legacy-sessions-per-principal (GRANTRY_MAX_LEGACY_SESSIONS_PER_PRINCIPAL)",
                "must be at least 1",
            ));
        }
        let allowed_origins = match (args.allowed_origins, file.allowed_origins) {
            (Some(text), _) => split_list(&text),
            (None, Some(list)) => list,
            (None, None) => Vec::new(),
        };
        for origin in &allowed_origins {
            parse_origin(origin).map_err(|m| bad("--allowed-origins", m))?;
        }
        Ok(Self {
            listen,
            public_url,
            data_dir,
            store,
            store_prefix: args
                .store_prefix
                .or(file.store_prefix)
                .unwrap_or_else(|| crate::store::DEFAULT_REDIS_PREFIX.to_owned()),
            allow_volatile_store: args
                .allow_volatile_store
                .or(file.allow_volatile_store)
                .unwrap_or(false),
            identity,
            oidc,
            limits,
            providers_file: args.providers.or(file.providers),
            allow_insecure_providers: match (
                args.allow_insecure_provider,
                file.allow_insecure_provider,
            ) {
                (Some(text), _) => split_list(&text),
                (None, list) => list.unwrap_or_default(),
            },
            retry_hold: Duration::from_secs(retry_hold),
            elicitation_timeout: Duration::from_secs(elicitation_timeout),
            max_legacy_sessions,
            max_legacy_sessions_per_principal,
            max_held_retries: positive(
                "--max-held-retries",
                args.max_held_retries.or(file.max_held_retries),
                1024,
            )? as usize,
            max_held_retries_per_principal: positive(
                "--max-held-retries-per-principal",
                args.max_held_retries_per_principal
                    .or(file.max_held_retries_per_principal),
                32,
            )? as usize,
            keys,
            allow_readable_key_file: args
                .allow_readable_key_file
                .or(file.allow_readable_key_file)
                .unwrap_or(false),
            request_state_ttl_secs: request_state_ttl as i64,
            // The demo's client secret is public: on by default only for the local user.
            demo: args
                .demo
                .or(file.demo)
                .unwrap_or(identity == IdentityMode::Dev),
            demo_token_ttl_secs: args.demo_token_ttl.or(file.demo_token_ttl).unwrap_or(3600),
            allowed_origins,
            demo_api_in_process: args
                .demo_api_in_process
                .or(file.demo_api_in_process)
                .unwrap_or(false),
            mcp_direct_path: args
                .mcp_direct_path
                .or(file.mcp_direct_path)
                .unwrap_or(true),
            no_url_elicitation: args
                .no_url_elicitation
                .or(file.no_url_elicitation)
                .unwrap_or_default(),
            log_format: args
                .log_format
                .or(file.log_format)
                .unwrap_or(LogFormat::Text),
            connections,
        })
    }
}

fn resolve_connections(
    args: &ServeArgs,
    file: &FileSettings,
) -> Result<ConnectionLimits, ConfigError> {
    let seconds = |setting: &str, given: Option<u64>, default: u64, max: u64| {
        let value = given.unwrap_or(default);
        if (1..=max).contains(&value) {
            Ok(Duration::from_secs(value))
        } else {
            Err(bad(setting, format!("must be between 1 and {max} seconds")))
        }
    };
    let at_least_one = |setting: &str, given: Option<usize>| match given {
        Some(0) => Err(bad(setting, "must be at least 1")),
        other => Ok(other),
    };
    Ok(ConnectionLimits {
        header_read_timeout: seconds(
            "--header-read-timeout (GRANTRY_HEADER_READ_TIMEOUT)",
            args.header_read_timeout.or(file.header_read_timeout),
            10,
            300,
        )?,
        body_read_timeout: seconds(
            "--body-read-timeout (GRANTRY_BODY_READ_TIMEOUT)",
            args.body_read_timeout.or(file.body_read_timeout),
            30,
            600,
        )?,
        idle_timeout: seconds(
            "--idle-timeout (GRANTRY_IDLE_TIMEOUT)",
            args.idle_timeout.or(file.idle_timeout),
            180,
            3600,
        )?,
        max_connections: at_least_one(
            "--max-connections (GRANTRY_MAX_CONNECTIONS)",
            args.max_connections.or(file.max_connections),
        )?,
        max_connections_per_address: at_least_one(
            "--max-connections-per-address (GRANTRY_MAX_CONNECTIONS_PER_ADDRESS)",
            args.max_connections_per_address
                .or(file.max_connections_per_address),
        )?
        .unwrap_or(256),
    })
}

fn read_file_settings(path: &Path) -> Result<FileSettings, ConfigError> {
    let setting = "--config (GRANTRY_CONFIG)";
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(setting, format!("cannot read {}: {e}", path.display())))?;
    toml::from_str(&text).map_err(|e| bad(setting, format!("{}: {e}", path.display())))
}

fn resolve_public_url(given: Option<String>, listen: SocketAddr) -> Result<String, ConfigError> {
    let setting = "--public-url (GRANTRY_PUBLIC_URL)";
    let text = given.unwrap_or_else(|| format!("http://{listen}"));
    let url = Url::parse(&text).map_err(|e| bad(setting, format!("`{text}`: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(setting, "must be an http or https URL"));
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(bad(
            setting,
            "must not carry a query, a fragment or credentials",
        ));
    }
    if url.path() != "/" {
        return Err(bad(
            setting,
            "must be an origin without a path (grantry serves its routes at the root)",
        ));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// Addresses or CIDR ranges; a bare address is a range of one.
fn parse_proxies(list: Vec<String>) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    list.iter()
        .map(|text| {
            text.parse::<ipnet::IpNet>()
                .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    bad(
                        "--trusted-proxies (GRANTRY_TRUSTED_PROXIES)",
                        format!("`{text}` is not an address or a CIDR range"),
                    )
                })
        })
        .collect()
}

fn positive(setting: &str, given: Option<u32>, default: u32) -> Result<u32, ConfigError> {
    match given.unwrap_or(default) {
        0 => Err(bad(setting, "must be at least 1")),
        n => Ok(n),
    }
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Parses `scheme://host[:port]` as an allowed browser origin.
fn parse_origin(origin: &str) -> Result<(), String> {
    let url = Url::parse(origin).map_err(|e| format!("`{origin}` is not an origin: {e}"))?;
    if url.path() != "/" || url.query().is_some() || url.host().is_none() {
        return Err(format!(
            "`{origin}` is not an origin (scheme://host[:port])"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
