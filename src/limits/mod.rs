//! Rate limits shared across replicas: fixed one-minute windows counted in the store.
//!
//! A request is decided locally, from the window's total as last read from the store plus
//! what this replica counted since; a background task adds the local counts to the store
//! every [`FLUSH_EVERY`] and reads the totals back, and also re-reads counters past half
//! their limit that got no new requests here (others may be filling them). So no request
//! waits on the store, and the replicas together overshoot a limit by at most what they admit
//! in one flush interval.

mod address;
pub(crate) mod redis;
pub(crate) mod sql;

pub(crate) use address::{client_address, counted_as};

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

use crate::config::Limits;
use crate::seal::digest;
use crate::store::StoreError;
use grantry_base::clock::unix_now;

/// How often local counts reach the store.
pub const FLUSH_EVERY: Duration = Duration::from_millis(250);
const WINDOW_SECS: i64 = 60;
/// Distinct counters one replica tracks per window; past it, newcomers of a bucket share one
/// overflow counter (so a flood of fresh addresses is limited together, in bounded memory).
const MAX_KEYS_PER_WINDOW: usize = 50_000;

/// Counters in the store, one per (bucket key, window).
#[async_trait]
pub(crate) trait CounterBackend: Send + Sync {
    /// Adds each delta to its key's counter in `window` and returns the new totals, in order.
    async fn add(&self, window: i64, deltas: &[(String, u64)]) -> Result<Vec<u64>, StoreError>;
    /// Drops counters of windows before `window`.
    async fn delete_before(&self, window: i64) -> Result<(), StoreError>;
    /// Drops every counter of `key` (windows up to `window`, the current one); says how many.
    async fn forget(&self, key: &str, window: i64) -> Result<u64, StoreError>;
}

/// The store key of a principal's MCP request counter, and the current window: what
/// erasing a person removes from the counters.
pub fn principal_counter(principal: &crate::identity::Principal) -> (String, i64) {
    (
        key(Bucket::McpPrincipal, &principal.limiter_id()),
        unix_now().div_euclid(WINDOW_SECS),
    )
}

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bucket {
    /// MCP requests of one principal.
    McpPrincipal,
    /// MCP requests from one client address.
    McpAddress,
    /// Browser requests (connect, login, callback) from one client address.
    BrowserAddress,
    /// Requests to the demo provider (`/demo`) from one client address.
    DemoAddress,
}

impl Bucket {
    /// How many buckets there are (`bucket as usize` indexes per-bucket arrays).
    const COUNT: usize = 4;

    fn label(self) -> &'static str {
        match self {
            Bucket::McpPrincipal => "mcp-principal",
            Bucket::McpAddress => "mcp-address",
            Bucket::BrowserAddress => "browser-address",
            Bucket::DemoAddress => "demo-address",
        }
    }

    fn limit(self, limits: &Limits) -> u64 {
        u64::from(match self {
            Bucket::McpPrincipal => limits.mcp_per_principal,
            Bucket::McpAddress => limits.mcp_per_ip,
            Bucket::BrowserAddress => limits.browser_per_ip,
            Bucket::DemoAddress => limits.demo_per_ip,
        })
    }
}

/// Refused: come back after this many seconds (the rest of the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryAfter(pub u64);

#[derive(Default)]
struct Counter {
    /// The window's total across replicas, as of this replica's last flush.
    known_total: u64,
    /// Admitted here and not yet added to the store.
    pending: u64,
    /// Being added to the store by the flush under way.
    in_flight: u64,
    limit: u64,
}

impl Counter {
    /// Worth asking the store about even with nothing to add: other replicas' requests could
    /// bring it to its limit.
    fn is_hot(&self) -> bool {
        self.known_total.saturating_mul(2) >= self.limit
    }

    fn seen(&self) -> u64 {
        self.known_total + self.in_flight + self.pending
    }
}

#[derive(Default)]
struct Window {
    number: i64,
    counters: HashMap<Arc<str>, Counter>,
    /// Store keys already hashed this window, per bucket: the same callers come back many
    /// times a minute, and hashing each request's address and principal again costs more
    /// than the rest of the decision.
    hashed: [HashMap<Box<[u8]>, Arc<str>>; Bucket::COUNT],
}

impl Window {
    fn key(&mut self, bucket: Bucket, who: &[u8]) -> Arc<str> {
        let hashed = &mut self.hashed[bucket as usize];
        if let Some(key) = hashed.get(who) {
            return key.clone();
        }
        let key: Arc<str> = key(bucket, who).into();
        if hashed.len() < MAX_KEYS_PER_WINDOW {
            hashed.insert(who.into(), key.clone());
        }
        key
    }
}

/// Decides requests against the limits; cheap to clone.
#[derive(Clone)]
pub(crate) struct Limiter {
    limits: Limits,
    window: Arc<Mutex<Window>>,
    cleaned: Arc<AtomicI64>,
}

impl Limiter {
    /// A limiter whose counts are shared through `backend` by a background task.
    pub(crate) fn start(backend: Arc<dyn CounterBackend>, limits: Limits) -> Self {
        let limiter = Self {
            limits,
            window: Arc::default(),
            cleaned: Arc::default(),
        };
        let flusher = limiter.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(FLUSH_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                flusher.flush(backend.as_ref()).await;
            }
        });
        limiter
    }

    /// Admits one request of `who` (any bytes that tell callers of `bucket` apart), counting
    /// it, or refuses it without counting it.
    pub(crate) fn admit(&self, bucket: Bucket, who: &[u8]) -> Result<(), RetryAfter> {
        let now = unix_now();
        let number = now.div_euclid(WINDOW_SECS);
        let limit = bucket.limit(&self.limits);
        let mut window = self.window.lock().expect("limiter lock is never poisoned");
        if window.number != number {
            *window = Window {
                number,
                ..Window::default()
            };
        }
        let key = window.key(bucket, who);
        let counter = match window.counters.get_mut(&*key) {
            Some(counter) => counter,
            None => {
                // Past the cap, newcomers of a bucket share its overflow counter.
                let key = if window.counters.len() >= MAX_KEYS_PER_WINDOW {
                    format!("{}:overflow", bucket.label()).into()
                } else {
                    key
                };
                window.counters.entry(key).or_default()
            }
        };
        if counter.seen() >= limit {
            let rest = WINDOW_SECS - now.rem_euclid(WINDOW_SECS);
            return Err(RetryAfter(rest.max(1) as u64));
        }
        counter.pending += 1;
        counter.limit = limit;
        Ok(())
    }

    /// Admits one request from client address `ip` (as [`client_address`] gives it).
    pub(crate) fn admit_address(&self, bucket: Bucket, ip: IpAddr) -> Result<(), RetryAfter> {
        match ip {
            IpAddr::V4(v4) => self.admit(bucket, &v4.octets()),
            IpAddr::V6(v6) => self.admit(bucket, &v6.octets()),
        }
    }

    /// Adds this replica's pending counts to the store and learns the totals.
    async fn flush(&self, backend: &dyn CounterBackend) {
        let (number, deltas) = {
            let mut window = self.window.lock().expect("limiter lock is never poisoned");
            let mut deltas: Vec<(String, u64)> = window
                .counters
                .iter_mut()
                .filter(|(_, c)| c.pending > 0 || c.is_hot())
                .map(|(k, c)| {
                    c.in_flight = std::mem::take(&mut c.pending);
                    (k.to_string(), c.in_flight)
                })
                .collect();
            // One order on every replica, so concurrent flushes never deadlock in SQL.
            deltas.sort_unstable();
            (window.number, deltas)
        };
        if deltas.is_empty() {
            return;
        }
        match backend.add(number, &deltas).await {
            Ok(totals) => {
                self.learn(number, &deltas, totals);
                // Once per window, the first flush drops what is two windows old.
                if self.cleaned.swap(number, Ordering::Relaxed) != number
                    && let Err(e) = backend.delete_before(number - 1).await
                {
                    tracing::debug!(error = %e, "old rate counters not removed yet");
                }
            }
            Err(e) => {
                // Keep the counts for the next flush: a store outage must not reset limits.
                tracing::warn!(error = %e, "rate counters could not reach the store");
                let mut window = self.window.lock().expect("limiter lock is never poisoned");
                if window.number == number {
                    for (key, delta) in deltas {
                        let counter = window.counters.entry(key.into()).or_default();
                        counter.in_flight = 0;
                        counter.pending += delta;
                    }
                }
            }
        }
    }

    /// Records the totals the store returned for a flush of window `number`.
    fn learn(&self, number: i64, deltas: &[(String, u64)], totals: Vec<u64>) {
        let mut window = self.window.lock().expect("limiter lock is never poisoned");
        if window.number == number {
            for ((key, _), total) in deltas.iter().zip(totals) {
                let counter = window.counters.entry(key.as_str().into()).or_default();
                counter.known_total = counter.known_total.max(total);
                counter.in_flight = 0;
            }
        }
    }
}

/// The store key of one counter: the bucket and a hash of who (no raw address at rest).
fn key(bucket: Bucket, who: &[u8]) -> String {
    let tag: String = digest("grantry/rate/v1", &[who]).chars().take(22).collect();
    format!("{}:{tag}", bucket.label())
}

#[cfg(test)]
mod tests;
