//! The keep-alive: refreshes grants before their provider's refresh-token idle window closes
//! (Xero forgets one unused for 60 days), retries failing refreshes after their backoff, and
//! warns of hard expiries (QuickBooks: five years after the sign-in).
//!
//! Every replica runs a [`KeepAlive`], but one round runs at a time across them: a round takes
//! the store lease [`SCHEDULER_LEASE`] and holds it until all its refreshes have ended. Each
//! grant's `keepalive_at` (indexed) says when to look at it next, so a round reads only the
//! grants due, a page at a time, never the whole table. Each refresh still goes through
//! [`TokenKeeper::refresh`] (the grant's own lease and compare-and-set), and writes the next
//! `keepalive_at` with the new tokens: a grant is refreshed once per window, however many
//! replicas and tool calls there are. The pace is bounded: at most `concurrency` refreshes at
//! once, and `rate_per_provider` per second to any one provider.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::access::{TokenKeeper, Trigger};
use super::health::{self, State};
use super::{Grant, GrantKey};
use crate::clock::unix_now;
use crate::config::KeepAlive as Pace;
use crate::providers::Provider;
use crate::store::StoreError;

/// The lease one round holds across the replicas.
pub const SCHEDULER_LEASE: &str = "keepalive-scheduler";
/// Grants read per page.
const PAGE: usize = 256;
/// The state gauges are counted every this many rounds (on Redis a count reads every grant).
const COUNT_EVERY_ROUNDS: u64 = 10;

/// What one round did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RoundReport {
    /// Another replica's round was under way.
    pub skipped: bool,
    /// Grants looked at.
    pub looked_at: usize,
    /// Refreshes started.
    pub refreshed: usize,
    /// Expiry warnings written.
    pub warned: usize,
}

#[derive(Clone)]
pub struct KeepAlive {
    tokens: TokenKeeper,
    providers: Arc<[Provider]>,
    pace: Pace,
    expiry_warning_secs: i64,
    rounds: Arc<std::sync::atomic::AtomicU64>,
}

impl KeepAlive {
    pub fn new(
        tokens: TokenKeeper,
        providers: Vec<Provider>,
        pace: Pace,
        expiry_warning_secs: i64,
    ) -> Self {
        Self {
            tokens,
            providers: providers.into(),
            pace,
            expiry_warning_secs,
            rounds: Arc::default(),
        }
    }

    /// Runs a round every interval for as long as the process runs.
    pub fn spawn(self) {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(self.pace.interval).await;
                match self.round().await {
                    Ok(report) if report.looked_at > 0 => {
                        tracing::debug!(?report, "keep-alive round");
                    }
                    Ok(_) => {}
                    Err(e) => {
                        crate::metrics::store_error("keepalive");
                        tracing::warn!(error = %e, "keep-alive round failed");
                    }
                }
            }
        });
    }

    /// One round, if no other replica's is under way.
    pub async fn round(&self) -> Result<RoundReport, StoreError> {
        let leases = &self.tokens.leases;
        let holder = crate::seal::random_id();
        // The lease outlives the round: the round stops starting work at half of it, and a
        // refresh ends within its own bounds (the provider timeout, the grant-lease wait).
        let lease_ms = 2 * (self.pace.interval.as_millis() as i64) + 120_000;
        if !leases
            .try_acquire(SCHEDULER_LEASE, &holder, lease_ms)
            .await?
        {
            return Ok(RoundReport {
                skipped: true,
                ..RoundReport::default()
            });
        }
        let deadline = Instant::now() + self.pace.interval.max(Duration::from_secs(1));
        let report = self.work(deadline).await;
        let round = self
            .rounds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if round.is_multiple_of(COUNT_EVERY_ROUNDS) {
            self.count_states().await;
        }
        leases.release(SCHEDULER_LEASE, &holder).await?;
        report
    }

    /// Looks after the grants due, a page at a time, until none is left or `deadline`.
    async fn work(&self, deadline: Instant) -> Result<RoundReport, StoreError> {
        let now = unix_now();
        let at_once = Arc::new(Semaphore::new(self.pace.concurrency));
        let pacer = Pacer::new(self.pace.rate_per_provider);
        let mut seen = HashSet::new();
        let mut report = RoundReport::default();
        let mut under_way = tokio::task::JoinSet::new();
        while Instant::now() < deadline {
            let page = self.tokens.grants.due_for_keepalive(now, PAGE).await?;
            let fresh: Vec<GrantKey> = page
                .into_iter()
                .filter(|k| seen.insert(k.clone()))
                .collect();
            if fresh.is_empty() {
                break;
            }
            for key in fresh {
                report.looked_at += 1;
                let permit = at_once.clone().acquire_owned().await.expect("never closed");
                let (this, pacer) = (self.clone(), pacer.clone());
                under_way.spawn(async move {
                    let _permit = permit;
                    this.look_after(key, now, &pacer).await
                });
            }
        }
        while let Some(done) = under_way.join_next().await {
            match done {
                Ok(Ok(Looked::Refreshed)) => report.refreshed += 1,
                Ok(Ok(Looked::Warned)) => report.warned += 1,
                Ok(Ok(Looked::Rescheduled)) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "keep-alive of a grant failed"),
                Err(e) => tracing::warn!(error = %e, "keep-alive task failed"),
            }
        }
        Ok(report)
    }

    /// Refreshes one grant if it is due, warns of its hard expiry if that is near, or files it
    /// for later.
    async fn look_after(
        &self,
        key: GrantKey,
        now: i64,
        pacer: &Pacer,
    ) -> Result<Looked, StoreError> {
        let grants = &self.tokens.grants;
        let Some(grant) = grants.get(&key).await? else {
            return Ok(Looked::Rescheduled);
        };
        let Some(provider) = self
            .providers
            .iter()
            .find(|p| p.id.as_str() == key.provider)
        else {
            // No longer offered: nothing to keep alive.
            grants.stop_keepalive(&key, &grant).await?;
            return Ok(Looked::Rescheduled);
        };
        if self.expiry_is_near(&grant, now) {
            grants.note_expiring(&key, provider, &grant, now).await?;
            return Ok(Looked::Warned); // looked at again next round, with the new version
        }
        if !is_due(provider, &grant, now) {
            grants.reschedule(&key, provider, &grant).await?;
            return Ok(Looked::Rescheduled);
        }
        if grant.tokens.refresh_token.is_none() {
            grants.stop_keepalive(&key, &grant).await?;
            return Ok(Looked::Rescheduled);
        }
        pacer.wait_turn(provider.id.as_str()).await;
        self.tokens
            .refresh(provider, &key, grant, Trigger::KeepAlive)
            .await?;
        Ok(Looked::Refreshed)
    }

    fn expiry_is_near(&self, grant: &Grant, now: i64) -> bool {
        grant.state != State::NeedsReauth
            && !grant.health.expiry_warned
            && grant
                .health
                .hard_expires_at
                .is_some_and(|at| at - self.expiry_warning_secs <= now)
    }

    /// Sets the connection gauges from the store's counts (every provider and state, so a
    /// state that emptied shows 0).
    async fn count_states(&self) {
        let counts = match self.tokens.grants.count_by_state().await {
            Ok(counts) => counts,
            Err(e) => {
                tracing::warn!(error = %e, "counting connections by state failed");
                return;
            }
        };
        for provider in self.providers.iter() {
            for state in State::ALL {
                let count = counts
                    .iter()
                    .find(|(p, s, _)| p == provider.id.as_str() && s == state.as_str())
                    .map_or(0, |(_, _, n)| *n);
                crate::metrics::connections_in_state(provider.id.as_str(), state.as_str(), count);
            }
        }
    }
}

/// What looking after one grant came to.
enum Looked {
    Refreshed,
    Warned,
    Rescheduled,
}

/// Whether `grant` needs its refresh now: a failing one once its backoff passed, an active
/// one once its idle window is three quarters gone.
fn is_due(provider: &Provider, grant: &Grant, now: i64) -> bool {
    match grant.state {
        State::NeedsReauth => false,
        State::RefreshFailing => grant.health.retry_at <= now,
        State::Active => health::refresh_due(provider, &grant.health, grant.updated_at)
            .is_some_and(|due| due <= now),
    }
}

/// Spaces refreshes to one provider at `rate` per second, across the round's tasks.
#[derive(Clone)]
struct Pacer {
    gap: Duration,
    next: Arc<Mutex<HashMap<String, Instant>>>,
}

impl Pacer {
    fn new(rate: u32) -> Self {
        Self {
            gap: Duration::from_secs(1) / rate.max(1),
            next: Arc::default(),
        }
    }

    async fn wait_turn(&self, provider: &str) {
        let turn = {
            let mut next = self.next.lock().expect("pacer lock");
            let slot = next.entry(provider.to_owned()).or_insert_with(Instant::now);
            let turn = (*slot).max(Instant::now());
            *slot = turn + self.gap;
            turn
        };
        tokio::time::sleep_until(turn).await;
    }
}
