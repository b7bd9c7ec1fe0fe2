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

use super::schedule::{next_look_of, refresh_due};
use super::tokens::{TokenAccess, TokenKeeper, Trigger};
use crate::config::KeepAlive as Pace;
use crate::grants::{Due, GrantKey, Reschedule, State};
use crate::providers::{Provider, ProviderId};
use crate::store::StoreError;
use grantry_base::clock::unix_now;

/// The lease one round holds across the replicas.
pub(crate) const SCHEDULER_LEASE: &str = "keepalive-scheduler";
/// Grants read per page.
const PAGE: usize = 256;
/// The state gauges are counted at most this often, and at most a twentieth of the time (on
/// Redis a count reads two fields of every grant: about 6 s for a million).
const COUNT_EVERY: Duration = Duration::from_secs(300);
const COUNT_SHARE: u32 = 20;

/// What one round did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RoundReport {
    /// Another replica's round was under way.
    pub(crate) skipped: bool,
    /// Grants looked at.
    pub looked_at: usize,
    /// Refreshes started.
    pub(crate) refreshed: usize,
    /// Expiry warnings written.
    pub(crate) warned: usize,
}

#[derive(Clone)]
pub struct KeepAlive {
    tokens: TokenKeeper,
    providers: Arc<[Provider]>,
    pace: Pace,
    expiry_warning_secs: i64,
    /// When the states may be counted next.
    next_count: Arc<Mutex<Instant>>,
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
            next_count: Arc::new(Mutex::new(Instant::now())),
        }
    }

    /// Runs a round every interval for as long as the process runs.
    pub(crate) fn spawn(self) {
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
        self.count_states_when_due().await;
        leases.release(SCHEDULER_LEASE, &holder).await?;
        report
    }

    /// Looks after the grants due, a page at a time (each page finished before the next is
    /// read, so a page never holds grants still being looked after), until none is left or
    /// `deadline`. A page's reschedules are written together. A grant whose turn failed is
    /// skipped for the rest of the round; only those are remembered, so the round's memory
    /// does not grow with the store.
    async fn work(&self, deadline: Instant) -> Result<RoundReport, StoreError> {
        let now = unix_now();
        let turns = Turns {
            at_once: Arc::new(Semaphore::new(self.pace.concurrency)),
            pacer: Pacer::new(self.pace.rate_per_provider),
        };
        let mut round = Round::default();
        while Instant::now() < deadline {
            let page = self.tokens.grants().due_for_keepalive(now, PAGE).await?;
            let todo: Vec<Due> = page
                .into_iter()
                .filter(|due| !round.skipped.contains(&due.key))
                .collect();
            if todo.is_empty() {
                break;
            }
            round.report.looked_at += todo.len();
            let moves = self.look_after_page(todo, now, &turns, &mut round).await;
            self.tokens.grants().reschedule(&moves).await?;
        }
        Ok(round.report)
    }

    /// Looks after one page's grants, `concurrency` at a time; returns the reschedules.
    async fn look_after_page(
        &self,
        todo: Vec<Due>,
        now: i64,
        turns: &Turns,
        round: &mut Round,
    ) -> Vec<Reschedule> {
        let mut under_way = tokio::task::JoinSet::new();
        for due in todo {
            let permit = turns
                .at_once
                .clone()
                .acquire_owned()
                .await
                .expect("never closed");
            let (this, pacer) = (self.clone(), turns.pacer.clone());
            under_way.spawn(async move {
                let _permit = permit;
                let looked = this.look_after(&due, now, &pacer).await;
                (due.key, looked)
            });
        }
        let mut moves = Vec::new();
        while let Some(done) = under_way.join_next().await {
            let Ok((key, looked)) = done else {
                tracing::warn!("a keep-alive task failed");
                continue;
            };
            match looked {
                Ok(Looked::Refreshed) => round.report.refreshed += 1,
                Ok(Looked::Warned) => round.report.warned += 1,
                Ok(Looked::Later(at)) => moves.push(at),
                Ok(Looked::Deferred) => {
                    round.skipped.insert(key);
                }
                Err(e) => {
                    tracing::warn!(error = %e, grant = %key.tag(), "keep-alive of a grant failed");
                    round.skipped.insert(key);
                }
            }
        }
        moves
    }

    /// Refreshes one grant if it is due, warns of its hard expiry if that is near, or says when
    /// to look again; its tokens are opened only to act on them.
    async fn look_after(&self, due: &Due, now: i64, pacer: &Pacer) -> Result<Looked, StoreError> {
        let grants = self.tokens.grants();
        let key = &due.key;
        let never = |version| Looked::Later(Reschedule::never(key, version));
        let Some(provider) = self.providers.iter().find(|p| p.id == key.provider) else {
            return Ok(never(due.version)); // no longer offered: nothing to keep alive
        };
        let expiring = self.expiry_is_near(due, now);
        if !expiring && !is_due(provider, due, now) {
            let later = next_look_of(due, provider, self.expiry_warning_secs);
            return Ok(Looked::Later(later));
        }
        let Some(grant) = grants.get(key).await? else {
            return Ok(Looked::Refreshed); // gone meanwhile: nothing left to do
        };
        if expiring {
            self.tokens
                .lifecycle
                .note_expiring(key, provider, &grant, now)
                .await?;
            return Ok(Looked::Warned); // its refresh, if due, comes with the next page
        }
        if grant.tokens.refresh_token.is_none() {
            return Ok(never(grant.version));
        }
        pacer.wait_turn(&provider.id).await;
        let refreshed = self
            .tokens
            .refresh(provider, key, grant, Trigger::KeepAlive)
            .await?;
        Ok(match refreshed {
            // Its failure is recorded (with its next try) unless another replica's refresh
            // was under way; either way, not again this round.
            TokenAccess::Unavailable => Looked::Deferred,
            TokenAccess::Token { .. } | TokenAccess::SignInNeeded(_) => Looked::Refreshed,
        })
    }

    fn expiry_is_near(&self, due: &Due, now: i64) -> bool {
        due.state != State::NeedsReauth
            && !due.health.expiry_warned
            && due
                .health
                .hard_expires_at
                .is_some_and(|at| at - self.expiry_warning_secs <= now)
    }

    /// Counts the states, if [`COUNT_EVERY`] passed since the last count and it took at most
    /// a [`COUNT_SHARE`]th of the time since.
    async fn count_states_when_due(&self) {
        if Instant::now() < *self.next_count.lock().expect("count lock") {
            return;
        }
        let started = Instant::now();
        self.count_states().await;
        let wait = COUNT_EVERY.max(started.elapsed() * COUNT_SHARE);
        *self.next_count.lock().expect("count lock") = Instant::now() + wait;
    }

    /// Sets the connection gauges from the store's counts (every provider and state, so a
    /// state that emptied shows 0).
    async fn count_states(&self) {
        let counts = match self.tokens.grants().count_by_state().await {
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
                crate::metrics::connections_in_state(&provider.id, state.as_str(), count);
            }
        }
    }
}

/// What looking after one grant came to.
enum Looked {
    /// Refreshed (or found needing the user): its write set the next look.
    Refreshed,
    Warned,
    /// Nothing to do yet: look again then.
    Later(Reschedule),
    /// Not done now (the provider or another replica's refresh): skipped for this round.
    Deferred,
}

/// What a round's pages share: the concurrency bound and the per-provider pace.
struct Turns {
    at_once: Arc<Semaphore>,
    pacer: Pacer,
}

/// A round so far.
#[derive(Default)]
struct Round {
    report: RoundReport,
    skipped: HashSet<GrantKey>,
}

/// Whether `due` needs its refresh now: a failing one once its backoff passed, an active
/// one once its idle window is three quarters gone.
fn is_due(provider: &Provider, due: &Due, now: i64) -> bool {
    match due.state {
        State::NeedsReauth => false,
        State::RefreshFailing => due.health.retry_at <= now,
        State::Active => {
            refresh_due(provider, &due.health, due.updated_at).is_some_and(|at| at <= now)
        }
    }
}

/// Spaces refreshes to one provider at `rate` per second, across the round's tasks.
#[derive(Clone)]
struct Pacer {
    gap: Duration,
    next: Arc<Mutex<HashMap<ProviderId, Instant>>>,
}

impl Pacer {
    fn new(rate: u32) -> Self {
        Self {
            gap: Duration::from_secs(1) / rate.max(1),
            next: Arc::default(),
        }
    }

    async fn wait_turn(&self, provider: &ProviderId) {
        let turn = {
            let mut next = self.next.lock().expect("pacer lock");
            let slot = next.entry(provider.clone()).or_insert_with(Instant::now);
            let turn = (*slot).max(Instant::now());
            *slot = turn + self.gap;
            turn
        };
        tokio::time::sleep_until(turn).await;
    }
}
