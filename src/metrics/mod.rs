//! Prometheus metrics on `GET /metrics`: what the connector is doing, never who for.
//!
//! Labels take values from small fixed sets (MCP methods, outcomes) or from the provider
//! catalog (provider ids); no principal, account, token or flow id ever becomes a label.

use std::sync::OnceLock;
use std::time::Duration;

use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

mod connections;
mod handles;
mod lifecycle;

use crate::ids::ProviderId;
pub(crate) use connections::{connection_expired, connection_refused, connections_open};
use handles::McpSeries;
pub(crate) use lifecycle::delivery;
pub(crate) use lifecycle::{
    connections_in_state, deliveries_dropped, lifecycle_event, outbox_depth,
};

/// MCP requests, by method and outcome.
pub(crate) const MCP_REQUESTS: &str = "grantry_mcp_requests_total";
/// Time to the answer's headers (a held retry switches to a stream after 500 ms).
pub(crate) const MCP_DURATION: &str = "grantry_mcp_request_duration_seconds";
/// Sign-ins, by provider and outcome (`started`, `completed`, `declined`, `failed`).
pub(crate) const SIGN_INS: &str = "grantry_sign_ins_total";
/// Token refreshes, by provider and outcome.
pub(crate) const REFRESHES: &str = "grantry_refreshes_total";
/// Retries held open right now, waiting for a sign-in to land.
pub(crate) const HELD_RETRIES: &str = "grantry_held_retries";
/// How many retries may be held at once (`--max-held-retries`), for alerting near it.
pub(crate) const HELD_RETRIES_LIMIT: &str = "grantry_held_retries_limit";
/// Legacy-era (2025-11-25) sessions opened by `initialize`.
pub(crate) const SESSIONS_OPENED: &str = "grantry_mcp_sessions_opened_total";
/// MCP tasks (the Tasks extension) by what happened: `created`, `completed`, `failed`,
/// `cancelled`, `expired`.
pub(crate) const TASKS: &str = "grantry_tasks_total";
/// Store operations that failed, by where they were needed.
pub(crate) const STORE_ERRORS: &str = "grantry_store_errors_total";

/// Seconds: from a fast in-memory answer to a held retry's switch to a stream.
const DURATION_BUCKETS: &[f64] = &[
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// The MCP methods counted by name; any other method counts as `other`, so a client cannot
/// create label values at will.
const KNOWN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "initialize",
    "ping",
    "resources/list",
    "prompts/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// The recorder, installed once per process; later calls get the same handle.
pub(crate) fn install() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full(MCP_DURATION.into()), DURATION_BUCKETS)
                .expect("the duration buckets are not empty");
            let handle = match builder.install_recorder() {
                Ok(handle) => handle,
                // Another recorder owns the process (an embedding program's): keep a private
                // one so `/metrics` still answers, if emptily.
                Err(_) => PrometheusBuilder::new().build_recorder().handle(),
            };
            describe();
            connections::describe();
            lifecycle::describe();
            mcp_series();
            // Present from the first scrape, not from the first held retry.
            metrics::gauge!(HELD_RETRIES).set(0.0);
            handle
        })
        .clone()
}

/// The per-request series, registered with the recorder [`install`] puts in place (it asks
/// for them first, before any request).
fn mcp_series() -> &'static McpSeries {
    static SERIES: OnceLock<McpSeries> = OnceLock::new();
    SERIES.get_or_init(McpSeries::register)
}

/// How often histogram samples are folded into their buckets.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Folds recorded histogram samples into their buckets every few seconds, for as long as the
/// process runs. The exporter keeps every sample until then (about 16 bytes per MCP request),
/// so a process that is never scraped would otherwise grow without bound.
pub(crate) fn spawn_upkeep(handle: PrometheusHandle) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(UPKEEP_EVERY);
        loop {
            tick.tick().await;
            handle.run_upkeep();
        }
    });
}

fn describe() {
    metrics::describe_counter!(MCP_REQUESTS, "MCP requests by method and outcome");
    metrics::describe_histogram!(
        MCP_DURATION,
        metrics::Unit::Seconds,
        "Time to the MCP answer's headers"
    );
    metrics::describe_counter!(SIGN_INS, "Sign-ins by provider and outcome");
    metrics::describe_counter!(REFRESHES, "Token refreshes by provider and outcome");
    metrics::describe_gauge!(HELD_RETRIES, "Retries held open waiting for a sign-in");
    metrics::describe_gauge!(
        HELD_RETRIES_LIMIT,
        "How many retries may be held open at once (--max-held-retries)"
    );
    metrics::describe_counter!(STORE_ERRORS, "Failed store operations by area");
    metrics::describe_counter!(
        SESSIONS_OPENED,
        "Legacy-era (2025-11-25) MCP sessions opened by initialize"
    );
    metrics::describe_counter!(
        TASKS,
        "MCP tasks by event: created, ended, expired, over_cap"
    );
}

/// A task event: `created`, `completed`, `failed`, `cancelled`, `expired`; `over_cap`, a
/// round answered as a round because its person's open tasks were at their cap.
pub(crate) fn task(event: &'static str, count: u64) {
    metrics::counter!(TASKS, "event" => event).increment(count);
}

/// `GET /metrics`, in the Prometheus text format.
pub(crate) async fn render(handle: PrometheusHandle) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        handle.render(),
    )
}

/// The label for an `Mcp-Method` header value.
pub(crate) fn method_label(method: Option<&str>) -> &'static str {
    match method {
        Some(m) => KNOWN_METHODS
            .iter()
            .find(|known| **known == m)
            .copied()
            .unwrap_or("other"),
        None => "none",
    }
}

/// How an MCP request ended, as counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A result (`complete`, or a non-tool method's result).
    Complete,
    /// `input_required`: the client is asked for something first.
    InputRequired,
    /// A JSON-RPC error.
    Error,
    /// The answer became a stream (a held retry); its end is counted by the sign-in metrics.
    Streamed,
    /// Refused before the protocol: authentication, rate limits, size (HTTP 4xx).
    Refused,
    /// HTTP 5xx.
    Failed,
    /// A task (`resultType: "task"`): the answer comes through `tasks/get`.
    Task,
}

impl Outcome {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Error => "error",
            Self::Streamed => "streamed",
            Self::Refused => "refused",
            Self::Failed => "failed",
            Self::Task => "task",
        }
    }

    /// Classifies a JSON-RPC answer's bytes without parsing them.
    pub(crate) fn of_json(body: &[u8]) -> Self {
        if memfind(body, br#""resultType":"input_required""#) {
            Self::InputRequired
        } else if memfind(body, br#""resultType":"task""#) {
            Self::Task
        } else if memfind(body, br#""error":{"#) && !memfind(body, br#""result":"#) {
            Self::Error
        } else {
            Self::Complete
        }
    }
}

fn memfind(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

pub(crate) fn mcp_request(method: &'static str, outcome: Outcome, elapsed: Duration) {
    let series = mcp_series().of(method);
    series.requests(outcome).increment(1);
    series.duration.record(elapsed.as_secs_f64());
}

/// The configured cap on held retries, beside the gauge of those held.
pub(crate) fn held_retries_limit(cap: usize) {
    metrics::gauge!(HELD_RETRIES_LIMIT).set(cap as f64);
}

/// A sign-in moved on: `started`, `completed`, `declined` or `failed`.
pub(crate) fn sign_in(provider: &ProviderId, outcome: &'static str) {
    metrics::counter!(SIGN_INS, "provider" => provider.to_string(), "outcome" => outcome)
        .increment(1);
}

/// A refresh ended: `refreshed`, `needs_reauth` (the provider refused the refresh token),
/// `unavailable` (the provider could not be reached or answered oddly) or `store_error`.
/// `trigger`: `on_use` (a tool needed the token) or `keepalive` (the scheduler).
pub(crate) fn refresh(provider: &ProviderId, trigger: &'static str, outcome: &'static str) {
    metrics::counter!(REFRESHES, "provider" => provider.to_string(), "trigger" => trigger,
        "outcome" => outcome)
    .increment(1);
}

/// A legacy-era session was opened (and stored).
pub(crate) fn session_opened() {
    metrics::counter!(SESSIONS_OPENED).increment(1);
}

/// A store operation failed where `area` needed it (`mcp`, `connect`, `callback`, `hold`,
/// `session`).
pub(crate) fn store_error(area: &'static str) {
    metrics::counter!(STORE_ERRORS, "area" => area).increment(1);
}

/// Counts one held retry for as long as the guard lives.
pub(crate) struct HeldRetry(());

impl HeldRetry {
    pub(crate) fn start() -> Self {
        metrics::gauge!(HELD_RETRIES).increment(1.0);
        Self(())
    }
}

impl Drop for HeldRetry {
    fn drop(&mut self) {
        metrics::gauge!(HELD_RETRIES).decrement(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_read_from_the_answer() {
        let input = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}"#;
        assert_eq!(Outcome::of_json(input), Outcome::InputRequired);
        let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}"#;
        assert_eq!(Outcome::of_json(error), Outcome::Error);
        let done = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"\"error\":{"}]}}"#;
        assert_eq!(Outcome::of_json(done), Outcome::Complete);
    }

    #[test]
    fn unknown_methods_do_not_become_labels() {
        assert_eq!(method_label(Some("tools/call")), "tools/call");
        assert_eq!(method_label(Some("x/$(rm -rf)")), "other");
        assert_eq!(method_label(None), "none");
    }

    #[test]
    fn the_alerting_rules_name_only_metrics_grantry_exports() {
        let rules = include_str!("../../deploy/prometheus/alerts.yml");
        let exported = [
            MCP_REQUESTS,
            SIGN_INS,
            REFRESHES,
            HELD_RETRIES,
            HELD_RETRIES_LIMIT,
            SESSIONS_OPENED,
            STORE_ERRORS,
            lifecycle::CONNECTIONS,
            lifecycle::EVENTS,
            lifecycle::DELIVERIES,
            lifecycle::OUTBOX_PENDING,
            lifecycle::OUTBOX_PARKED,
            lifecycle::OUTBOX_OLDEST,
            lifecycle::DROPPED,
            connections::OPEN_CONNECTIONS,
        ];
        let named: Vec<&str> = rules
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|word| word.starts_with("grantry_"))
            .collect();
        assert!(
            named.len() >= 8,
            "the rules name grantry's metrics: {named:?}"
        );
        for name in named {
            assert!(
                exported.contains(&name),
                "{name} is not a metric grantry exports"
            );
        }
    }
}
