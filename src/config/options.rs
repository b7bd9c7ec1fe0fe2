//! Every option of `grantry serve`, declared once: the field is the TOML key of the `--config`
//! file, its `long` the flag, its `env` the variable, its `default_value` the default (which
//! `--help` shows). Values are parsed into their types here; `Config::resolve` checks the
//! options against each other.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args};

use super::unechoed::{Unechoed, parsed};
use super::values::{
    ClaimMatch, CommaList, Origin, ProxyRange, PublicUrl, Scope, at_least_one, per_minute, seconds,
};
use super::webhooks::{DEFAULT_RETRY_SCHEDULE, EndpointTarget, RetrySchedule};
use secrecy::SecretString;

use super::{IdentityMode, LogFormat, NoUrlElicitation};
use crate::providers::ProviderId;
use crate::store::StoreUrl;
use crate::ui::Lang;
use crate::ui::brand::Color;

/// Options of `grantry serve`. Each is also an environment variable and a key of the TOML file
/// named by `--config` (the key is the long flag with `_` for `-`); a flag or variable wins
/// over the file, the file over the default.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// TOML file with any of the settings below.
    #[arg(long, env = "GRANTRY_CONFIG", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Address to listen on.
    #[arg(
        long,
        env = "GRANTRY_LISTEN",
        value_name = "ADDR",
        default_value = "127.0.0.1:8080"
    )]
    pub(crate) listen: SocketAddr,
    /// URL where users and clients reach grantry; links and the OAuth redirect URI are built
    /// from it [default: http:// + the listen address].
    #[arg(long, env = "GRANTRY_PUBLIC_URL", value_name = "URL",
          value_parser = Unechoed(parsed::<PublicUrl>))]
    pub(crate) public_url: Option<PublicUrl>,
    /// Directory for the embedded SQLite store and a generated key.
    #[arg(
        long,
        env = "GRANTRY_DATA_DIR",
        value_name = "DIR",
        default_value = "./grantry-data"
    )]
    pub(crate) data_dir: PathBuf,
    /// Store URL: sqlite://PATH, postgres://… or redis://… (rediss://…)
    /// [default: sqlite://{data_dir}/grantry.db].
    #[arg(
        long,
        env = "GRANTRY_STORE",
        value_name = "URL",
        hide_env_values = true,
        hide_default_value = true,
        value_parser = Unechoed(parsed::<StoreUrl>)
    )]
    pub(crate) store: Option<StoreUrl>,
    /// Prefix of every key grantry writes to a Redis store.
    #[arg(
        long,
        env = "GRANTRY_STORE_PREFIX",
        value_name = "PREFIX",
        default_value = crate::store::DEFAULT_REDIS_PREFIX
    )]
    pub(crate) store_prefix: String,
    /// Start on a store that could lose acknowledged grants (PostgreSQL without
    /// synchronous_commit; Redis without AOF fsync on every write, or with eviction) instead of
    /// refusing.
    #[arg(long, env = "GRANTRY_ALLOW_VOLATILE_STORE", value_name = "BOOL",
          default_value_t = false, action = ArgAction::Set)]
    pub(crate) allow_volatile_store: bool,
    /// Replicas of a Redis store that must hold a write a person is told about (a grant
    /// stored at sign-in, a refresh and its lease, a disconnect) within
    /// --redis-min-replicas-timeout:
    /// `WAIT` after it; too few is an error (the page says it did not connect). 0: none are
    /// awaited, and a failover may lose what only the old primary had.
    #[arg(
        long,
        env = "GRANTRY_REDIS_MIN_REPLICAS",
        value_name = "N",
        default_value_t = 0
    )]
    pub(crate) redis_min_replicas: u32,
    /// Milliseconds a write waits for --redis-min-replicas replicas.
    #[arg(long, env = "GRANTRY_REDIS_MIN_REPLICAS_TIMEOUT", value_name = "MILLISECONDS",
          default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub(crate) redis_min_replicas_timeout: u64,
    /// Identity mode.
    #[arg(long, env = "GRANTRY_IDENTITY", value_enum, default_value_t = IdentityMode::Dev)]
    pub(crate) identity: IdentityMode,
    /// OpenID Connect issuer (oidc identity): MCP access tokens come from it and browsers
    /// sign in at it. https, or http on a loopback address.
    #[arg(long, env = "GRANTRY_OIDC_ISSUER", value_name = "URL")]
    pub(crate) oidc_issuer: Option<String>,
    /// Client id grantry uses for the browser login at the issuer (oidc identity). Its secret
    /// is read from the environment variable GRANTRY_OIDC_CLIENT_SECRET only.
    #[arg(long, env = "GRANTRY_OIDC_CLIENT_ID", value_name = "ID")]
    pub(crate) oidc_client_id: Option<String>,
    /// Read from GRANTRY_OIDC_CLIENT_SECRET (never a flag: command lines are visible to every
    /// local user).
    #[arg(skip = std::env::var("GRANTRY_OIDC_CLIENT_SECRET").ok().map(SecretString::from))]
    pub(crate) oidc_client_secret: Option<SecretString>,
    /// Scopes every MCP access token must carry, comma-separated (oidc identity) [default: none].
    #[arg(long, env = "GRANTRY_OIDC_SCOPES", value_name = "SCOPES")]
    pub(crate) oidc_scopes: Option<CommaList<Scope>>,
    /// Scopes a call of a tool that reads needs beyond --oidc-scopes, comma-separated (oidc
    /// identity): list_invoices, list_connections, connect_account, connection_status. A
    /// token without them gets 403 insufficient_scope naming them [default: none].
    #[arg(long, env = "GRANTRY_OIDC_READ_SCOPES", value_name = "SCOPES")]
    pub(crate) oidc_read_scopes: Option<CommaList<Scope>>,
    /// Scopes a call of a tool that writes invoices needs beyond --oidc-scopes (oidc
    /// identity): create_invoice, void_invoice [default: none].
    #[arg(long, env = "GRANTRY_OIDC_WRITE_SCOPES", value_name = "SCOPES")]
    pub(crate) oidc_write_scopes: Option<CommaList<Scope>>,
    /// Scopes a call of a tool that disconnects accounts needs beyond --oidc-scopes (oidc
    /// identity): disconnect_account [default: none].
    #[arg(long, env = "GRANTRY_OIDC_MANAGE_SCOPES", value_name = "SCOPES")]
    pub(crate) oidc_manage_scopes: Option<CommaList<Scope>>,
    /// Claims that mark an MCP access token as having no person behind it (oidc identity),
    /// as CLAIM=VALUE, comma-separated: such a caller is never sent a sign-in link or a
    /// form; a tool that needs a connection tells it no person can sign in. A token whose
    /// `sub` is its own `client_id` or `azp` (a client-credentials token) is always one
    /// [default: none beyond that].
    #[arg(
        long,
        env = "GRANTRY_NON_INTERACTIVE_CLAIM",
        value_name = "CLAIM=VALUE"
    )]
    pub(crate) non_interactive_claim: Option<CommaList<ClaimMatch>>,
    /// MCP requests per minute allowed to one principal.
    #[arg(long, env = "GRANTRY_RATE_MCP_PRINCIPAL", value_name = "N",
          default_value = "600", value_parser = per_minute)]
    pub(crate) rate_mcp_principal: u32,
    /// MCP requests per minute allowed from one client address.
    #[arg(long, env = "GRANTRY_RATE_MCP_IP", value_name = "N",
          default_value = "1200", value_parser = per_minute)]
    pub(crate) rate_mcp_ip: u32,
    /// Browser requests per minute (connect, login, callback) allowed from one client address.
    #[arg(long, env = "GRANTRY_RATE_BROWSER_IP", value_name = "N",
          default_value = "60", value_parser = per_minute)]
    pub(crate) rate_browser_ip: u32,
    /// Requests per minute to the demo provider (/demo: its pages, token endpoint and billing
    /// API, grantry's own calls to it included) allowed from one client address.
    #[arg(long, env = "GRANTRY_RATE_DEMO_IP", value_name = "N",
          default_value = "600", value_parser = per_minute)]
    pub(crate) rate_demo_ip: u32,
    /// Proxies whose X-Forwarded-For is believed, comma-separated addresses or CIDR ranges
    /// (e.g. 127.0.0.1/32,10.0.0.0/8); the client is the rightmost entry not among them
    /// [default: none: the peer address counts].
    #[arg(long, env = "GRANTRY_TRUSTED_PROXIES", value_name = "CIDRS")]
    pub(crate) trusted_proxies: Option<CommaList<ProxyRange>>,
    /// Sign-ins a principal may have waiting for the provider at once; starting one more
    /// supersedes the oldest.
    #[arg(long, env = "GRANTRY_MAX_PENDING_FLOWS", value_name = "N",
          default_value = "5", value_parser = per_minute)]
    pub(crate) max_pending_flows: u32,
    /// TOML provider catalog: client ids for the built-in providers (stripe, xero, quickbooks,
    /// freshbooks, zoho, sage), overrides of any of their fields, new generic providers.
    #[arg(long, env = "GRANTRY_PROVIDERS", value_name = "FILE")]
    pub(crate) providers: Option<PathBuf>,
    /// Providers (catalog ids, comma-separated) allowed plain http URLs to hosts that are not
    /// loopback, for test setups only: their client secret, codes and tokens cross the
    /// network in cleartext [default: none].
    #[arg(long, env = "GRANTRY_ALLOW_INSECURE_PROVIDER", value_name = "IDS")]
    pub(crate) allow_insecure_provider: Option<CommaList<ProviderId>>,
    /// Seconds a retried tool call waits for a pending sign-in before asking again (at most
    /// 300: clients give up on a round after about 60).
    #[arg(long, env = "GRANTRY_RETRY_HOLD", value_name = "SECONDS",
          default_value = "45", value_parser = seconds(0, 300))]
    pub(crate) retry_hold: Duration,
    /// Seconds between a held retry's reads of the store. A landed grant wakes its held
    /// retries at once, on any replica, by an event; this read is the safety net for an event
    /// lost on the way.
    #[arg(long, env = "GRANTRY_HOLD_POLL_INTERVAL", value_name = "SECONDS",
          default_value = "2", value_parser = seconds(1, 300))]
    pub(crate) hold_poll_interval: Duration,
    /// Seconds a retry that accepted a sign-in waits for its link to be opened: past them,
    /// with the connect page never reached, the client is taken to have shown the link to
    /// nobody, and the call answers with the link in a tool result the model reads.
    #[arg(long, env = "GRANTRY_UNOPENED_LINK_WAIT", value_name = "SECONDS",
          default_value = "15", value_parser = seconds(1, 300))]
    pub(crate) unopened_link_wait: Duration,
    /// Legacy-era (2025-11-25) sessions this process keeps in memory at once; past it an idle
    /// one (of the principal holding most) makes room, and only when none is idle does a new
    /// one (or one restored from the store) get 503.
    #[arg(long, env = "GRANTRY_MAX_LEGACY_SESSIONS", value_name = "N",
          default_value = "2048", value_parser = at_least_one)]
    pub(crate) max_legacy_sessions: usize,
    /// Legacy-era sessions one principal may keep in this process's memory at once; past it
    /// their own least recently used idle session makes room.
    #[arg(long, env = "GRANTRY_MAX_LEGACY_SESSIONS_PER_PRINCIPAL", value_name = "N",
          default_value = "32", value_parser = at_least_one)]
    pub(crate) max_legacy_sessions_per_principal: usize,
    /// Legacy-era sessions one principal may keep in the store, across every replica; past
    /// it, opening one forgets their least recently used (its client's next request gets
    /// 404 and opens another, as the protocol says).
    #[arg(long, env = "GRANTRY_MAX_STORED_LEGACY_SESSIONS_PER_PRINCIPAL", value_name = "N",
          default_value = "64", value_parser = at_least_one)]
    pub(crate) max_stored_legacy_sessions_per_principal: usize,
    /// Seconds a legacy-era (2025-11-25) form or confirmation question, asked with
    /// elicitation/create, waits for its answer; unanswered, nothing is changed.
    #[arg(long, env = "GRANTRY_ELICITATION_TIMEOUT", value_name = "SECONDS",
          default_value = "300", value_parser = seconds(1, 3600))]
    pub(crate) elicitation_timeout: Duration,
    /// Requests this process holds open at once: retries waiting for a pending sign-in, and
    /// legacy-era GET streams. Past it a retry is asked again at once, and a stream refused
    /// (503).
    #[arg(long, env = "GRANTRY_MAX_HELD_RETRIES", value_name = "N",
          default_value = "1024", value_parser = at_least_one)]
    pub(crate) max_held_retries: usize,
    /// Of those, the most one principal may hold in this process (held retries and GET
    /// streams together); past it their retry is asked again at once, and their stream
    /// refused (429).
    #[arg(long, env = "GRANTRY_MAX_HELD_RETRIES_PER_PRINCIPAL", value_name = "N",
          default_value = "32", value_parser = at_least_one)]
    pub(crate) max_held_retries_per_principal: usize,
    /// Sealing keys, comma-separated base64url (32 bytes each); the first seals, all open.
    /// Prefer the environment variable. [default: a key generated in the data directory]
    #[arg(
        long,
        env = "GRANTRY_KEYS",
        value_name = "KEYS",
        hide_env_values = true,
        hide_default_value = true
    )]
    pub(crate) keys: Option<CommaList<String>>,
    /// Start even if the data directory's generated sealing key file is readable by group or
    /// others (a warning instead of a refusal).
    #[arg(long, env = "GRANTRY_ALLOW_READABLE_KEY_FILE", value_name = "BOOL",
          default_value_t = false, action = ArgAction::Set)]
    pub(crate) allow_readable_key_file: bool,
    /// Seconds a requestState and its sign-in link stay valid; an MCP task made of its round
    /// lives as long.
    #[arg(long, env = "GRANTRY_REQUEST_STATE_TTL", value_name = "SECONDS",
          default_value = "600", value_parser = seconds(30, 86_400))]
    pub(crate) request_state_ttl: Duration,
    /// Serve the built-in demo provider under /demo [default: true with dev identity, false
    /// with oidc: its client secret is public and it would be offered to real users].
    #[arg(long, env = "GRANTRY_DEMO", value_name = "BOOL", action = ArgAction::Set)]
    pub(crate) demo: Option<bool>,
    /// Lifetime of the demo provider's access tokens, in seconds.
    #[arg(long, env = "GRANTRY_DEMO_TOKEN_TTL", value_name = "SECONDS",
          default_value = "3600", value_parser = seconds(1, 86_400))]
    pub(crate) demo_token_ttl: Duration,
    /// Extra browser origins allowed to call /mcp, comma-separated (the public URL's origin is
    /// always allowed) [default: none].
    #[arg(long, env = "GRANTRY_ALLOWED_ORIGINS", value_name = "ORIGINS")]
    pub(crate) allowed_origins: Option<CommaList<Origin>>,
    /// What a client that cannot show a sign-in link (nor, for a confirmation, a form) gets:
    /// `link`, a tool result the model reads (the connect link to pass on; nothing changed
    /// and why), or `spec`, JSON-RPC -32021 naming the capability. A host that renders MCP
    /// Apps is sent to the connect card either way.
    #[arg(long, env = "GRANTRY_NO_URL_ELICITATION", value_enum,
          default_value_t = NoUrlElicitation::Link)]
    pub(crate) no_url_elicitation: NoUrlElicitation,
    /// For benchmarks: the demo adapter calls the demo billing API inside the process rather
    /// than over loopback HTTP, so a benchmark shows grantry's own cost per call.
    #[arg(long, env = "GRANTRY_DEMO_API_IN_PROCESS", value_name = "BOOL",
          default_value_t = false, action = ArgAction::Set)]
    pub(crate) demo_api_in_process: bool,
    /// Seconds a client has to send a whole request head, from the connection's accept or
    /// from the head's first byte.
    #[arg(long, env = "GRANTRY_HEADER_READ_TIMEOUT", value_name = "SECONDS",
          default_value = "10", value_parser = seconds(1, 300))]
    pub(crate) header_read_timeout: Duration,
    /// Seconds a client has to send a whole request body, from the end of its head.
    #[arg(long, env = "GRANTRY_BODY_READ_TIMEOUT", value_name = "SECONDS",
          default_value = "30", value_parser = seconds(1, 600))]
    pub(crate) body_read_timeout: Duration,
    /// Seconds a keep-alive connection may wait for its next request before it is closed, and
    /// an answer its client has stopped reading may wait for it; keep it above the idle
    /// timeout of the proxy in front.
    #[arg(long, env = "GRANTRY_IDLE_TIMEOUT", value_name = "SECONDS",
          default_value = "180", value_parser = seconds(1, 3600))]
    pub(crate) idle_timeout: Duration,
    /// Connections open at once; past it a new one is answered 503 and closed
    /// [default: the open-file limit less 512, at most 8192].
    #[arg(long, env = "GRANTRY_MAX_CONNECTIONS", value_name = "N", value_parser = at_least_one)]
    pub(crate) max_connections: Option<usize>,
    /// Connections open at once from one client address (IPv6: one /64); a trusted proxy's
    /// count only towards --max-connections.
    #[arg(long, env = "GRANTRY_MAX_CONNECTIONS_PER_ADDRESS", value_name = "N",
          default_value = "256", value_parser = at_least_one)]
    pub(crate) max_connections_per_address: usize,
    /// Webhook endpoints for connection lifecycle events, comma-separated NAME=URL (https, or
    /// http to a loopback address). Each endpoint's Standard Webhooks secret (`whsec_…`; two,
    /// space-separated, while rotating) is read from GRANTRY_WEBHOOK_SECRET_{NAME} only
    /// [default: none: no events are queued].
    #[arg(long, env = "GRANTRY_WEBHOOK_URL", value_name = "NAME=URL",
          value_parser = Unechoed(parsed::<CommaList<EndpointTarget>>))]
    pub(crate) webhook_url: Option<CommaList<EndpointTarget>>,
    /// Seconds between a webhook delivery's attempts, comma-separated; after the last one a
    /// delivery is parked (`grantry events retry` sends it again). A 4xx other than 408 and
    /// 429 is parked after three attempts, a 410 at once.
    #[arg(long, env = "GRANTRY_WEBHOOK_RETRIES", value_name = "SECONDS,…",
          default_value = DEFAULT_RETRY_SCHEDULE)]
    pub(crate) webhook_retries: RetrySchedule,
    /// Undelivered (pending or parked) webhook deliveries kept per endpoint: past it the
    /// oldest parked are dropped first, then the oldest pending, each drop counted in
    /// grantry_webhook_deliveries_dropped_total and logged as an error.
    #[arg(long, env = "GRANTRY_WEBHOOK_MAX_UNDELIVERED", value_name = "N",
          default_value = "100000", value_parser = at_least_one)]
    pub(crate) webhook_max_undelivered: usize,
    /// Refresh grants in the background before their provider's refresh-token idle window
    /// closes (one scheduler across the replicas).
    #[arg(long, env = "GRANTRY_KEEPALIVE", value_name = "BOOL",
          default_value_t = true, action = ArgAction::Set)]
    pub(crate) keepalive: bool,
    /// Seconds between the keep-alive scheduler's rounds.
    #[arg(long, env = "GRANTRY_KEEPALIVE_INTERVAL", value_name = "SECONDS",
          default_value = "30", value_parser = seconds(1, 3600))]
    pub(crate) keepalive_interval: Duration,
    /// Keep-alive refreshes under way at once.
    #[arg(long, env = "GRANTRY_KEEPALIVE_CONCURRENCY", value_name = "N",
          default_value = "4", value_parser = at_least_one)]
    pub(crate) keepalive_concurrency: usize,
    /// Keep-alive refreshes per second to any one provider.
    #[arg(long, env = "GRANTRY_KEEPALIVE_RATE", value_name = "N",
          default_value = "5", value_parser = per_minute)]
    pub(crate) keepalive_rate: u32,
    /// Days before a connection's hard expiry (QuickBooks: five years after sign-in) that
    /// `connection.expiring` is sent.
    #[arg(long, env = "GRANTRY_EXPIRY_WARNING", value_name = "DAYS",
          default_value = "30", value_parser = per_minute)]
    pub(crate) expiry_warning: u32,
    /// The name people see on every page and in the messages their MCP client shows (1 to 60
    /// characters).
    #[arg(long, env = "GRANTRY_BRAND_NAME", value_name = "NAME",
          default_value = crate::ui::brand::DEFAULT_NAME, value_parser = brand_name)]
    pub(crate) brand_name: String,
    /// A logo shown on every page, served by grantry: a PNG, JPEG, WebP or SVG file of at most
    /// 256 KiB, read at start [default: none].
    #[arg(long, env = "GRANTRY_BRAND_LOGO", value_name = "FILE")]
    pub(crate) brand_logo: Option<PathBuf>,
    /// The accent colour of buttons and links, as #RRGGBB or #RGB; it must be dark enough to
    /// read on white (contrast 4.5:1) [default: grantry's blue].
    #[arg(long, env = "GRANTRY_BRAND_COLOR", value_name = "#RRGGBB", value_parser = brand_color)]
    pub(crate) brand_color: Option<Color>,
    /// Where people get help, linked at the foot of every page (http or https, without a user
    /// name or password) [default: no link].
    #[arg(long, env = "GRANTRY_SUPPORT_URL", value_name = "URL",
          value_parser = Unechoed(support_url))]
    pub(crate) support_url: Option<url::Url>,
    /// The language of the messages MCP clients show people (the protocol carries no locale),
    /// and of pages when the browser asks for none grantry speaks: en, de or fr.
    #[arg(long, env = "GRANTRY_DEFAULT_LANGUAGE", value_name = "LANG",
          default_value = "en", value_parser = language)]
    pub(crate) default_language: Lang,
    /// Log format.
    #[arg(long, env = "GRANTRY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    /// Send OpenTelemetry traces (OTLP over HTTP, protobuf) to this collector: its base URL,
    /// after whose path `/v1/traces` is added. Unset: off, unless the standard
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set.
    #[arg(long, env = "GRANTRY_OTLP_ENDPOINT", value_name = "URL",
          value_parser = Unechoed(otlp_endpoint))]
    pub(crate) otlp_endpoint: Option<url::Url>,
}

fn otlp_endpoint(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(url),
        _ => Err("an http or https URL of the collector, e.g. http://collector:4318".into()),
    }
}

fn brand_name(text: &str) -> Result<String, String> {
    crate::ui::brand::check_name(text).map_err(|e| e.to_string())
}

fn brand_color(text: &str) -> Result<Color, String> {
    Color::parse(text).map_err(|e| e.to_string())
}

fn support_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err("must be an http or https URL".into());
    }
    // It is published on every page: a user name or password in it would be too.
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry a user name or password (it is shown on every page)".into());
    }
    Ok(url)
}

fn language(text: &str) -> Result<Lang, String> {
    Lang::parse(text).ok_or_else(|| {
        let spoken: Vec<&str> = Lang::ALL.iter().map(|l| l.tag()).collect();
        format!(
            "`{text}` is not a language grantry speaks ({})",
            spoken.join(", ")
        )
    })
}

impl ServeArgs {
    /// The options as these flags (and the environment) give them, without a subcommand:
    /// for tests, benchmarks and tools that build a configuration in code.
    pub fn from_flags<I, T>(flags: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::FromArgMatches as _;
        let command = Self::augment_args(clap::Command::new("grantry"));
        let argv = std::iter::once(std::ffi::OsString::from("grantry"))
            .chain(flags.into_iter().map(Into::into));
        Self::from_arg_matches(&command.try_get_matches_from(argv)?)
    }
}
