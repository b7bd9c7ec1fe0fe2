//! Delivery: every replica runs one [`Deliverer`], which claims due deliveries, posts each
//! to its endpoint signed the Standard Webhooks way, and records the outcome. A slow,
//! failing or redirecting endpoint only delays its own deliveries: tool calls and sign-ins
//! never wait on it (their writes only add rows).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use tokio::sync::Notify;

use super::retry::{self, Answer};
use super::{CLAIM_SECS, Claimed, OutboxBackend, Outcome};
use crate::clock::unix_now;
use crate::config::webhooks::{Endpoint, RetrySchedule};

/// Time allowed for one attempt (the spec recommends 15 to 30 s).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Deliveries claimed per round, and posted at once.
const BATCH: usize = 32;
const AT_ONCE: usize = 8;
/// Between rounds when nothing was due: another replica's write wakes this one only by then.
const POLL: Duration = Duration::from_secs(1);
/// How long a woken deliverer waits before it claims.
const AFTER_WAKE: Duration = Duration::from_millis(50);
/// Between measurements of the outbox's depth.
const MEASURE_EVERY: Duration = Duration::from_secs(15);

/// Posts what the outbox holds. Cheap to clone.
#[derive(Clone)]
pub struct Deliverer {
    backend: Arc<dyn OutboxBackend>,
    endpoints: Arc<[Endpoint]>,
    retries: RetrySchedule,
    http: reqwest::Client,
    /// Rung after this process writes an event, so it goes out at once.
    wake: Arc<Notify>,
}

impl Deliverer {
    pub fn new(
        backend: Arc<dyn OutboxBackend>,
        endpoints: Vec<Endpoint>,
        retries: RetrySchedule,
        wake: Arc<Notify>,
    ) -> Self {
        crate::providers::http::install_tls_provider();
        let http = reqwest::Client::builder()
            // A redirect is a failure (the endpoint should be updated), never followed.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(5))
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("grantry/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the TLS provider is installed");
        Self {
            backend,
            endpoints: endpoints.into(),
            retries,
            http,
            wake,
        }
    }

    /// Delivers for as long as the process runs, and measures the outbox for the metrics.
    pub fn spawn(self) {
        let measured = self.backend.clone();
        tokio::spawn(async move {
            loop {
                match measured.depth(unix_now()).await {
                    Ok(d) => {
                        crate::metrics::outbox_depth(d.pending, d.parked, d.oldest_pending_age)
                    }
                    Err(e) => tracing::debug!(error = %e, "measuring the outbox failed"),
                }
                tokio::time::sleep(MEASURE_EVERY).await;
            }
        });
        tokio::spawn(async move {
            loop {
                let worked = match self.round().await {
                    Ok(n) => n,
                    Err(e) => {
                        crate::metrics::store_error("outbox");
                        tracing::warn!(error = %e, "claiming webhook deliveries failed");
                        0
                    }
                };
                // A round that did work is followed at once: what it claimed may have been
                // the head of a connection's queue, whose next event is due now.
                if worked == 0
                    && tokio::time::timeout(POLL, self.wake.notified())
                        .await
                        .is_ok()
                {
                    // Woken by a write: let the request that wrote it answer first, and let
                    // events written together be claimed together.
                    tokio::time::sleep(AFTER_WAKE).await;
                }
            }
        });
    }

    /// One round: claims due deliveries and attempts each; returns how many it claimed.
    pub async fn round(&self) -> Result<usize, crate::store::StoreError> {
        let claimed = self.backend.claim(unix_now(), BATCH, CLAIM_SECS).await?;
        let count = claimed.len();
        futures::stream::iter(claimed)
            .for_each_concurrent(AT_ONCE, |one| async move { self.attempt(one).await })
            .await;
        Ok(count)
    }

    async fn attempt(&self, claimed: Claimed) {
        let delivery = &claimed.delivery;
        let outcome = match self
            .endpoints
            .iter()
            .find(|e| e.name.as_str() == delivery.endpoint)
        {
            Some(endpoint) => {
                let answer = self.post(endpoint, &claimed).await;
                retry::outcome(&answer, delivery.attempts, &self.retries, unix_now())
            }
            None => Outcome::Parked {
                error: "the endpoint is no longer configured".into(),
            },
        };
        let label = match &outcome {
            Outcome::Delivered { .. } => "delivered",
            Outcome::Failed { .. } => "failed",
            Outcome::Parked { .. } => "parked",
        };
        crate::metrics::delivery(&delivery.endpoint, label);
        if let Outcome::Parked { error } = &outcome {
            tracing::warn!(endpoint = %delivery.endpoint, event = %delivery.event_id, %error, "webhook delivery parked");
        }
        // If this write fails the claim lapses and the delivery is attempted again, with the
        // same webhook-id: receivers dedupe on it.
        if let Err(e) = self.backend.settle(&claimed, &outcome).await {
            crate::metrics::store_error("outbox");
            tracing::warn!(error = %e, event = %delivery.event_id, "recording a webhook attempt failed");
        }
    }

    /// One signed POST. The answer's body is never read.
    async fn post(&self, endpoint: &Endpoint, claimed: &Claimed) -> Answer {
        let delivery = &claimed.delivery;
        let timestamp = unix_now();
        let signature = super::sign::signature(
            &endpoint.secrets,
            &delivery.event_id,
            timestamp,
            delivery.body.as_bytes(),
        );
        let sent = self
            .http
            .post(endpoint.url.clone())
            .header("content-type", "application/json")
            .header("webhook-id", &delivery.event_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(delivery.body.clone())
            .send()
            .await;
        match sent {
            Ok(response) => Answer::Status {
                code: response.status().as_u16(),
                retry_after_secs: response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse().ok()),
            },
            Err(e) => Answer::Transport(transport_failure(&e)),
        }
    }
}

/// Why an attempt got no answer, for `events list`: the innermost cause ("connection closed
/// before message completed"), never the URL.
fn transport_failure(error: &reqwest::Error) -> String {
    if error.is_timeout() || error.is_connect() {
        return crate::providers::http::transport_reason(error);
    }
    let mut cause: &dyn std::error::Error = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}
