//! Delivery: every replica runs one loop per endpoint, which claims that endpoint's due
//! deliveries, posts each signed the Standard Webhooks way, and records the outcome. The
//! endpoints are worked independently, and each attempt has a deadline: a slow, failing,
//! hanging or redirecting endpoint only delays its own deliveries. Tool calls and sign-ins
//! never wait on any of them (their writes only add rows).

use crate::telemetry::outbound::{self, Peer};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use super::retry::{self, Answer};
use super::{CLAIM_SECS, Claimed, OutboxBackend, Outcome};
use crate::config::webhooks::{Endpoint, RetrySchedule};
use grantry_base::clock::unix_now;

/// Time allowed for one attempt (the spec recommends 15 to 30 s).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// An attempt's own deadline, past the HTTP client's: whatever it waits on (a name lookup,
/// a TLS handshake, a body that never ends), it is over by then.
const ATTEMPT_DEADLINE: Duration = Duration::from_secs(REQUEST_TIMEOUT.as_secs() + 2);
/// Deliveries under way at once to one endpoint.
const AT_ONCE: usize = 8;
/// Between claims when nothing was due: another replica's write wakes this one only by then.
const POLL: Duration = Duration::from_secs(1);
/// How long a woken loop waits before it claims.
const AFTER_WAKE: Duration = Duration::from_millis(50);

/// Posts what the outbox holds. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Deliverer {
    backend: Arc<dyn OutboxBackend>,
    endpoints: Arc<[Endpoint]>,
    retries: RetrySchedule,
    http: reqwest::Client,
    /// Rung after this process writes an event, so it goes out at once.
    wake: Arc<Notify>,
    /// Undelivered deliveries kept per endpoint (see [`super::housekeeping`]).
    max_undelivered: u64,
}

impl Deliverer {
    pub(crate) fn new(
        backend: Arc<dyn OutboxBackend>,
        endpoints: Vec<Endpoint>,
        retries: RetrySchedule,
        wake: Arc<Notify>,
        max_undelivered: u64,
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
            max_undelivered,
        }
    }

    /// Delivers to every endpoint, each on its own, for as long as the process runs; and
    /// keeps the outbox (see [`super::housekeeping`]).
    pub(crate) fn spawn(self) {
        let mut bells = Vec::new();
        for endpoint in self.endpoints.iter() {
            let bell = Arc::new(Notify::new());
            bells.push(bell.clone());
            tokio::spawn(self.clone().deliver_to(endpoint.clone(), bell));
        }
        // A write rings one bell; every endpoint's loop hears it.
        let wake = self.wake.clone();
        tokio::spawn(async move {
            loop {
                wake.notified().await;
                bells.iter().for_each(|bell| bell.notify_one());
            }
        });
        tokio::spawn(super::housekeeping::run(
            self.backend.clone(),
            self.endpoints.clone(),
            self.max_undelivered,
        ));
    }

    /// `endpoint`'s loop: claims as many due deliveries as it has room for, attempts each in
    /// a task of its own, and claims again as soon as one is done.
    async fn deliver_to(self, endpoint: Endpoint, bell: Arc<Notify>) {
        let room = Arc::new(Semaphore::new(AT_ONCE));
        loop {
            let first = room.clone().acquire_owned().await.expect("never closed");
            let worked = self.claim_and_attempt(&endpoint, &room, first).await;
            // Work done: what it claimed may have been the head of a connection's queue,
            // whose next event is due now. Otherwise wait for a write or the next poll.
            if !worked && tokio::time::timeout(POLL, bell.notified()).await.is_ok() {
                // Woken by a write: let the request that wrote it answer first, and let
                // events written together be claimed together.
                tokio::time::sleep(AFTER_WAKE).await;
            }
        }
    }

    /// One claim for `endpoint`, its attempts started; whether it claimed anything.
    async fn claim_and_attempt(
        &self,
        endpoint: &Endpoint,
        room: &Arc<Semaphore>,
        first: OwnedSemaphorePermit,
    ) -> bool {
        let free = 1 + room.available_permits();
        let name = endpoint.name.as_str();
        let claimed = match self.backend.claim(name, unix_now(), free, CLAIM_SECS).await {
            Ok(claimed) => claimed,
            Err(e) => {
                crate::metrics::store_error("outbox");
                tracing::warn!(endpoint = name, error = %e, "claiming webhook deliveries failed");
                return false;
            }
        };
        let worked = !claimed.is_empty();
        let mut permits = std::iter::once(first)
            .chain(std::iter::from_fn(|| room.clone().try_acquire_owned().ok()));
        for one in claimed {
            let permit = permits.next().expect("claimed no more than the room");
            let deliverer = self.clone();
            let endpoint = endpoint.clone();
            tokio::spawn(async move {
                deliverer.attempt(&endpoint, one).await;
                drop(permit);
            });
        }
        worked
    }

    /// One attempt at `claimed`, to `endpoint`, and its outcome recorded.
    async fn attempt(&self, endpoint: &Endpoint, claimed: Claimed) {
        let delivery = &claimed.delivery;
        let answer = tokio::time::timeout(ATTEMPT_DEADLINE, self.post(endpoint, &claimed))
            .await
            .unwrap_or_else(|_| {
                Answer::Transport(format!("no answer within {} s", ATTEMPT_DEADLINE.as_secs()))
            });
        let outcome = retry::outcome(&answer, delivery.attempts, &self.retries, unix_now());
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
        let request = self
            .http
            .post(endpoint.url.clone())
            .header("content-type", "application/json")
            .header("webhook-id", &delivery.event_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(delivery.body.clone());
        let peer = Peer {
            role: "webhook",
            name: Some(endpoint.name.as_str()),
        };
        let sent = outbound::send(request, peer).await;
        match sent {
            Ok(response) => Answer::Status {
                code: response.status().as_u16(),
                retry_after_secs: grantry_base::net::retry_after(response.headers())
                    .map(|wait| wait.as_secs()),
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
