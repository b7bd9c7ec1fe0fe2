//! Keeping the outbox, on every replica: its depth measured for the metrics; what waits for
//! each endpoint capped (a receiver down for weeks must not grow the store without bound);
//! and deliveries for endpoints no longer configured parked, for `events list` to show.

use std::sync::Arc;
use std::time::Duration;

use super::{CLAIM_SECS, OutboxBackend, Outcome};
use crate::config::webhooks::Endpoint;
use grantry_base::clock::unix_now;

/// Between measurements of the outbox's depth.
const MEASURE_EVERY: Duration = Duration::from_secs(15);
/// Measurements between two rounds of capping and parking (the first round runs at start).
const KEEP_EVERY: u32 = 20;
/// Deliveries parked per claim for an endpoint no longer configured.
const PARK_BATCH: usize = 100;

/// Measures every [`MEASURE_EVERY`], caps and parks every [`KEEP_EVERY`] measurements.
pub(crate) async fn run(backend: Arc<dyn OutboxBackend>, endpoints: Arc<[Endpoint]>, keep: u64) {
    let names: Vec<&str> = endpoints.iter().map(|e| e.name.as_str()).collect();
    for round in 0u32.. {
        if round % KEEP_EVERY == 0 {
            cap(backend.as_ref(), &names, keep).await;
            park_unconfigured(backend.as_ref(), &names).await;
        }
        match backend.depth(&names, unix_now()).await {
            Ok(d) => crate::metrics::outbox_depth(d.pending, d.parked, d.oldest_pending_age),
            Err(e) => tracing::debug!(error = %e, "measuring the outbox failed"),
        }
        tokio::time::sleep(MEASURE_EVERY).await;
    }
}

/// Keeps at most `keep` undelivered deliveries per endpoint; dropping any is an operator's
/// matter, said loudly.
pub(crate) async fn cap(backend: &dyn OutboxBackend, endpoints: &[&str], keep: u64) {
    for endpoint in endpoints {
        match backend.cap_undelivered(endpoint, keep, unix_now()).await {
            Ok(0) => {}
            Ok(dropped) => {
                crate::metrics::deliveries_dropped(endpoint, dropped);
                tracing::error!(
                    endpoint,
                    dropped,
                    kept = keep,
                    "webhook deliveries DROPPED: the endpoint has more undelivered than \
                     --webhook-max-undelivered keeps (the oldest parked went first); mend the \
                     receiver, then `grantry events retry`"
                );
            }
            Err(e) => tracing::warn!(endpoint, error = %e, "capping the outbox failed"),
        }
    }
}

/// Parks what waits for endpoints that are no longer configured.
pub(crate) async fn park_unconfigured(backend: &dyn OutboxBackend, configured: &[&str]) {
    let pending = match backend.endpoints_pending().await {
        Ok(pending) => pending,
        Err(e) => return tracing::warn!(error = %e, "listing the outbox's endpoints failed"),
    };
    let gone = Outcome::Parked {
        error: "the endpoint is no longer configured".into(),
    };
    for endpoint in pending.iter().filter(|e| !configured.contains(&e.as_str())) {
        loop {
            // Claimed as of the far future: every delivery waiting, due or not.
            let claimed = match backend
                .claim(endpoint, i64::MAX / 2, PARK_BATCH, CLAIM_SECS)
                .await
            {
                Ok(claimed) if !claimed.is_empty() => claimed,
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!(endpoint, error = %e, "parking an old endpoint's deliveries failed");
                    break;
                }
            };
            tracing::warn!(
                endpoint,
                parked = claimed.len(),
                "webhook deliveries parked: their endpoint is no longer configured"
            );
            for one in &claimed {
                if let Err(e) = backend.settle(one, &gone).await {
                    tracing::warn!(endpoint, error = %e, "parking a delivery failed");
                }
            }
        }
    }
}
