//! The command line: subcommands and the options of `grantry serve`, each also an environment
//! variable (clap reads both).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Deserialize;

/// Command line of the `grantry` binary.
#[derive(Debug, Parser)]
#[command(
    name = "grantry",
    version,
    about = "A URL-mode OAuth connector for MCP: hosts tools over users' third-party accounts and the sign-in routes behind them.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of `grantry serve` (the default subcommand).
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on /mcp and the browser sign-in routes (the default).
    Serve(Box<ServeArgs>),
    /// Bring the store's schema up to date and exit (serve does this at start too).
    Migrate(Box<ServeArgs>),
    /// Manage sealing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Print a new random key (base64url, 32 bytes) for GRANTRY_KEYS.
    Generate,
    /// Show how many grants each key seals, and which keys the ring holds.
    Status(Box<ServeArgs>),
    /// Re-seal every grant still under an older key with the first key of GRANTRY_KEYS, in
    /// batches, each grant with compare-and-set on its version.
    Rewrap(Box<ServeArgs>),
}

/// Who the caller is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdentityMode {
    /// One local user for every request and browser; loopback listen address and public URL only.
    Dev,
    /// Bearer tokens and browser login from an OpenID Connect issuer (`--oidc-*`).
    Oidc,
}

/// A secret setting: its `Debug` output never shows it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// What a client that declared no URL elicitation gets when a sign-in is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoUrlElicitation {
    /// The spec's answer: JSON-RPC -32021 naming the capability.
    #[default]
    Spec,
    /// A tool error whose text carries the connect link, for the person to open and then
    /// ask again (the connect page's identity check makes the link useless to anyone else).
    Link,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// Options of `grantry serve`. Each is also an environment variable and a key of the TOML file
/// named by `--config` (the key is the long flag with `_` for `-`).
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// TOML file with any of the settings below.
    #[arg(long, env = "GRANTRY_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "GRANTRY_LISTEN", value_name = "ADDR")]
    pub listen: Option<String>,
    /// URL where users and clients reach grantry; links and the OAuth redirect URI are built
    /// from it [default: http:// + the listen address].
    #[arg(long, env = "GRANTRY_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
    /// Directory for the embedded SQLite store and a generated key [default: ./grantry-data].
    #[arg(long, env = "GRANTRY_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Store URL: sqlite://PATH, postgres://… or redis://… (rediss://…)
    /// [default: SQLite in the data directory].
    #[arg(
        long,
        env = "GRANTRY_STORE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub store: Option<String>,
    /// Prefix of every key grantry writes to a Redis store [default: grantry:].
    #[arg(long, env = "GRANTRY_STORE_PREFIX", value_name = "PREFIX")]
    pub store_prefix: Option<String>,
    /// Start on a store that could lose acknowledged grants (PostgreSQL without
    /// synchronous_commit; Redis without AOF fsync on every write, or with eviction) instead of
    /// refusing [default: false].
    #[arg(long, env = "GRANTRY_ALLOW_VOLATILE_STORE", value_name = "BOOL")]
    pub allow_volatile_store: Option<bool>,
    /// Identity mode [default: dev].
    #[arg(long, env = "GRANTRY_IDENTITY", value_enum)]
    pub identity: Option<IdentityMode>,
    /// OpenID Connect issuer (oidc identity): MCP access tokens come from it and browsers
    /// sign in at it. https, or http on a loopback address.
    #[arg(long, env = "GRANTRY_OIDC_ISSUER", value_name = "URL")]
    pub oidc_issuer: Option<String>,
    /// Client id grantry uses for the browser login at the issuer (oidc identity). Its secret
    /// is read from the environment variable GRANTRY_OIDC_CLIENT_SECRET only.
    #[arg(long, env = "GRANTRY_OIDC_CLIENT_ID", value_name = "ID")]
    pub oidc_client_id: Option<String>,
    /// Read from GRANTRY_OIDC_CLIENT_SECRET (never a flag: command lines are visible to every
    /// local user).
    #[arg(skip = std::env::var("GRANTRY_OIDC_CLIENT_SECRET").ok().map(Secret))]
    pub oidc_client_secret: Option<Secret>,
    /// Scopes every MCP access token must carry, comma-separated (oidc identity) [default: none].
    #[arg(long, env = "GRANTRY_OIDC_SCOPES", value_name = "SCOPES")]
    pub oidc_scopes: Option<String>,
    /// MCP requests per minute allowed to one principal [default: 600].
    #[arg(long, env = "GRANTRY_RATE_MCP_PRINCIPAL", value_name = "N")]
    pub rate_mcp_principal: Option<u32>,
    /// MCP requests per minute allowed from one client address [default: 1200].
    #[arg(long, env = "GRANTRY_RATE_MCP_IP", value_name = "N")]
    pub rate_mcp_ip: Option<u32>,
    /// Browser requests per minute (connect, login, callback) allowed from one client address
    /// [default: 60].
    #[arg(long, env = "GRANTRY_RATE_BROWSER_IP", value_name = "N")]
    pub rate_browser_ip: Option<u32>,
    /// Requests per minute to the demo provider (/demo: its pages, token endpoint and billing
    /// API, grantry's own calls to it included) allowed from one client address [default: 600].
    #[arg(long, env = "GRANTRY_RATE_DEMO_IP", value_name = "N")]
    pub rate_demo_ip: Option<u32>,
    /// Proxies whose X-Forwarded-For is believed, comma-separated addresses or CIDR ranges
    /// (e.g. 127.0.0.1/32,10.0.0.0/8); the client is the rightmost entry not among them
    /// [default: none: the peer address counts].
    #[arg(long, env = "GRANTRY_TRUSTED_PROXIES", value_name = "CIDRS")]
    pub trusted_proxies: Option<String>,
    /// Sign-ins a principal may have waiting for the provider at once; starting one more
    /// supersedes the oldest [default: 5].
    #[arg(long, env = "GRANTRY_MAX_PENDING_FLOWS", value_name = "N")]
    pub max_pending_flows: Option<u32>,
    /// TOML provider catalog: client ids for the built-in providers (stripe, xero, quickbooks,
    /// freshbooks, zoho, sage), overrides of any of their fields, new generic providers.
    #[arg(long, env = "GRANTRY_PROVIDERS", value_name = "FILE")]
    pub providers: Option<PathBuf>,
    /// Providers (catalog ids, comma-separated) allowed plain http URLs to hosts that are not
    /// loopback, for test setups only: their client secret, codes and tokens cross the
    /// network in cleartext [default: none].
    #[arg(long, env = "GRANTRY_ALLOW_INSECURE_PROVIDER", value_name = "IDS")]
    pub allow_insecure_provider: Option<String>,
    /// Seconds a retried tool call waits for a pending sign-in before asking again [default: 45].
    #[arg(long, env = "GRANTRY_RETRY_HOLD", value_name = "SECONDS")]
    pub retry_hold: Option<u64>,
    /// Legacy-era (2025-11-25) sessions this process keeps in memory at once; past it an idle
    /// one (of the principal holding most) makes room, and only when none is idle does a new
    /// one (or one restored from the store) get 503 [default: 2048].
    #[arg(long, env = "GRANTRY_MAX_LEGACY_SESSIONS", value_name = "N")]
    pub max_legacy_sessions: Option<usize>,
    /// Legacy-era sessions one principal may keep in this process's memory at once; past it
    /// their own least recently used idle session makes room [default: 32].
    #[arg(
        long,
        env = "GRANTRY_MAX_LEGACY_SESSIONS_PER_PRINCIPAL",
        value_name = "N"
    )]
    pub max_legacy_sessions_per_principal: Option<usize>,
    /// Seconds a legacy-era (2025-11-25) form or confirmation question, asked with
    /// elicitation/create, waits for its answer; unanswered, nothing is changed [default: 300].
    #[arg(long, env = "GRANTRY_ELICITATION_TIMEOUT", value_name = "SECONDS")]
    pub elicitation_timeout: Option<u64>,
    /// Retries this process holds open at once while their sign-ins are pending; past it a
    /// retry is asked again at once [default: 1024].
    #[arg(long, env = "GRANTRY_MAX_HELD_RETRIES", value_name = "N")]
    pub max_held_retries: Option<u32>,
    /// Retries one principal may have held open at once in this process; past it their
    /// retry is asked again at once [default: 32].
    #[arg(long, env = "GRANTRY_MAX_HELD_RETRIES_PER_PRINCIPAL", value_name = "N")]
    pub max_held_retries_per_principal: Option<u32>,
    /// Sealing keys, comma-separated base64url (32 bytes each); the first seals, all open.
    /// Prefer the environment variable. [default: a key generated in the data directory]
    #[arg(
        long,
        env = "GRANTRY_KEYS",
        value_name = "KEYS",
        hide_env_values = true
    )]
    pub keys: Option<String>,
    /// Start even if the data directory's generated sealing key file is readable by group or
    /// others (a warning instead of a refusal) [default: false].
    #[arg(long, env = "GRANTRY_ALLOW_READABLE_KEY_FILE", value_name = "BOOL")]
    pub allow_readable_key_file: Option<bool>,
    /// Seconds a requestState and its sign-in link stay valid [default: 600].
    #[arg(long, env = "GRANTRY_REQUEST_STATE_TTL", value_name = "SECONDS")]
    pub request_state_ttl: Option<u64>,
    /// Serve the built-in demo provider under /demo [default: true with dev identity, false
    /// with oidc: its client secret is public and it would be offered to real users].
    #[arg(long, env = "GRANTRY_DEMO", value_name = "BOOL")]
    pub demo: Option<bool>,
    /// Lifetime of the demo provider's access tokens, in seconds [default: 3600].
    #[arg(long, env = "GRANTRY_DEMO_TOKEN_TTL", value_name = "SECONDS")]
    pub demo_token_ttl: Option<i64>,
    /// Extra browser origins allowed to call /mcp, comma-separated (the public URL's origin is
    /// always allowed).
    #[arg(long, env = "GRANTRY_ALLOWED_ORIGINS", value_name = "ORIGINS")]
    pub allowed_origins: Option<String>,
    /// What a client without URL elicitation gets when a sign-in is needed: `spec` (-32021)
    /// or `link` (a tool error carrying the connect link) [default: spec].
    #[arg(long, env = "GRANTRY_NO_URL_ELICITATION", value_enum)]
    pub no_url_elicitation: Option<NoUrlElicitation>,
    /// For benchmarks: the demo adapter calls the demo billing API inside the process rather
    /// than over loopback HTTP, so a benchmark shows grantry's own cost per call.
    #[arg(long, env = "GRANTRY_DEMO_API_IN_PROCESS", value_name = "BOOL")]
    pub demo_api_in_process: Option<bool>,
    /// Answer well-formed discover, tools/list and plain tools/call requests without rmcp's
    /// per-request machinery (same answers, several times the throughput); `false` sends
    /// every request through rmcp [default: true].
    #[arg(long, env = "GRANTRY_MCP_DIRECT_PATH", value_name = "BOOL")]
    pub mcp_direct_path: Option<bool>,
    /// Seconds a client has to send a whole request head, from the connection's accept or
    /// from the head's first byte [default: 10].
    #[arg(long, env = "GRANTRY_HEADER_READ_TIMEOUT", value_name = "SECONDS")]
    pub header_read_timeout: Option<u64>,
    /// Seconds a client has to send a whole request body, from the end of its head
    /// [default: 30].
    #[arg(long, env = "GRANTRY_BODY_READ_TIMEOUT", value_name = "SECONDS")]
    pub body_read_timeout: Option<u64>,
    /// Seconds a keep-alive connection may wait for its next request before it is closed; keep
    /// it above the idle timeout of the proxy in front [default: 180].
    #[arg(long, env = "GRANTRY_IDLE_TIMEOUT", value_name = "SECONDS")]
    pub idle_timeout: Option<u64>,
    /// Connections open at once; past it a new one is answered 503 and closed
    /// [default: the open-file limit less 512, at most 8192].
    #[arg(long, env = "GRANTRY_MAX_CONNECTIONS", value_name = "N")]
    pub max_connections: Option<usize>,
    /// Connections open at once from one client address (IPv6: one /64); a trusted proxy's
    /// count only towards --max-connections [default: 256].
    #[arg(long, env = "GRANTRY_MAX_CONNECTIONS_PER_ADDRESS", value_name = "N")]
    pub max_connections_per_address: Option<usize>,
    /// Log format [default: text].
    #[arg(long, env = "GRANTRY_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,
}
