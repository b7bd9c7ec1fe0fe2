//! The connection lifecycle's series: connections by health state, lifecycle events, webhook
//! deliveries and the outbox's depth. Labels are provider ids, states, event types, outcomes
//! and the operator's endpoint names: never a principal or an account.

use crate::ids::ProviderId;

/// Connections by provider and health state (`active`, `refresh_failing`, `needs_reauth`),
/// as the keep-alive scheduler last counted them.
pub(crate) const CONNECTIONS: &str = "grantry_connections";
/// Lifecycle events written to the outbox, by type.
pub(crate) const EVENTS: &str = "grantry_connection_events_total";
/// Webhook delivery attempts, by endpoint and outcome (`delivered`, `failed`, `parked`).
pub(crate) const DELIVERIES: &str = "grantry_webhook_deliveries_total";
/// Deliveries waiting in the outbox.
pub(crate) const OUTBOX_PENDING: &str = "grantry_outbox_pending";
/// Deliveries parked (SQL stores; Redis does not count them without reading every list).
pub(crate) const OUTBOX_PARKED: &str = "grantry_outbox_parked";
/// Age of the oldest delivery waiting, in seconds.
pub(crate) const OUTBOX_OLDEST: &str = "grantry_outbox_oldest_pending_seconds";
/// Deliveries dropped because their endpoint held more undelivered than it may keep.
pub(crate) const DROPPED: &str = "grantry_webhook_deliveries_dropped_total";

pub(super) fn describe() {
    metrics::describe_gauge!(CONNECTIONS, "Connections by provider and health state");
    metrics::describe_counter!(EVENTS, "Connection lifecycle events written, by type");
    metrics::describe_counter!(
        DELIVERIES,
        "Webhook delivery attempts, by endpoint and outcome"
    );
    metrics::describe_gauge!(OUTBOX_PENDING, "Webhook deliveries waiting in the outbox");
    metrics::describe_gauge!(OUTBOX_PARKED, "Webhook deliveries parked");
    metrics::describe_gauge!(
        OUTBOX_OLDEST,
        "Seconds since the oldest waiting delivery was written"
    );
    metrics::describe_counter!(
        DROPPED,
        "Webhook deliveries dropped past the endpoint's cap on undelivered ones (oldest parked first)"
    );
}

/// `count` deliveries to `endpoint` were dropped, past its cap.
pub(crate) fn deliveries_dropped(endpoint: &str, count: u64) {
    metrics::counter!(DROPPED, "endpoint" => endpoint.to_owned()).increment(count);
}

/// `count` connections of `provider` are in `state`.
pub(crate) fn connections_in_state(provider: &ProviderId, state: &'static str, count: i64) {
    metrics::gauge!(CONNECTIONS, "provider" => provider.to_string(), "state" => state)
        .set(count as f64);
}

/// A lifecycle event of `event_type` was written.
pub(crate) fn lifecycle_event(event_type: &'static str) {
    metrics::counter!(EVENTS, "type" => event_type).increment(1);
}

/// An attempt to `endpoint` ended with `outcome`.
pub(crate) fn delivery(endpoint: &str, outcome: &'static str) {
    metrics::counter!(DELIVERIES, "endpoint" => endpoint.to_owned(), "outcome" => outcome)
        .increment(1);
}

/// The outbox as last measured.
pub(crate) fn outbox_depth(pending: i64, parked: Option<i64>, oldest_age_secs: i64) {
    metrics::gauge!(OUTBOX_PENDING).set(pending as f64);
    if let Some(parked) = parked {
        metrics::gauge!(OUTBOX_PARKED).set(parked as f64);
    }
    metrics::gauge!(OUTBOX_OLDEST).set(oldest_age_secs as f64);
}
