//! Which legacy sessions this process keeps in memory (rmcp's, each tens of kilobytes), whose
//! they are, and whether they are in use: the fair share of `--max-legacy-sessions`.
//!
//! Every session is in the store, so one taken out of memory is not lost: its owner's next
//! request restores it. Making room therefore evicts rather than refuses:
//!
//! - a principal at its share (`--max-legacy-sessions-per-principal`) makes room by evicting
//!   its own least recently used idle session;
//! - at the total cap, the requester's own least recently used idle session goes first, else
//!   that of the principal holding the most; so one principal's load never turns another
//!   away while anyone has an idle session.
//!
//! A session is in use while a request names it (its GET stream, a call waiting on a
//! question): [`InUse`] rides on the answer's body. Only when nothing can be evicted is the
//! request refused (503, [`Crowded`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// Why there is no room for one more session of this principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Crowded {
    /// Every session of the principal's share is in use.
    Share,
    /// Every session in memory is in use.
    Total,
}

/// The sessions in memory here, by id.
pub(super) struct Residents {
    cap: usize,
    share: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    sessions: HashMap<String, Resident>,
    /// Places made for sessions being opened or restored, by owner, not yet named.
    reserved: HashMap<String, usize>,
    /// Tells a resident from an earlier one under the same id (evicted, then restored).
    next_generation: u64,
}

struct Resident {
    owner: String,
    last_used: Instant,
    in_use: usize,
    generation: u64,
}

/// A place made for one more session of `owner`; given back unless [`Residents::settle`]
/// names the session that took it.
pub(super) struct Reservation {
    residents: Arc<Residents>,
    owner: String,
    settled: bool,
}

/// A request using a session; the session is idle again once every one has dropped.
pub(crate) struct InUse {
    residents: Arc<Residents>,
    id: String,
    /// The resident it counts in: one evicted and restored meanwhile is another.
    generation: u64,
}

impl Residents {
    pub(super) fn new(cap: usize, share: usize) -> Arc<Self> {
        Arc::new(Self {
            cap,
            share,
            state: Mutex::default(),
        })
    }

    /// Makes room in memory for one more session of `owner`, evicting idle sessions from
    /// rmcp's memory where the share or the cap says so.
    pub(super) async fn make_room(
        self: &Arc<Self>,
        owner: &str,
        memory: &LocalSessionManager,
    ) -> Result<Reservation, Crowded> {
        let live: HashSet<String> = memory
            .sessions
            .read()
            .await
            .keys()
            .map(|id| id.to_string())
            .collect();
        let evicted = {
            let mut state = self.state();
            state.sessions.retain(|id, _| live.contains(id));
            let evicted = state.choose_evictions(owner, self.share, self.cap)?;
            *state.reserved.entry(owner.to_owned()).or_default() += 1;
            evicted
        };
        for id in &evicted {
            tracing::info!(
                owner,
                "legacy session moved out of memory to make room (kept in the store)"
            );
            if let Err(e) = memory.close_session(&id.as_str().into()).await {
                tracing::warn!(error = %e, "an evicted session did not close; it idles out");
            }
        }
        Ok(Reservation {
            residents: self.clone(),
            owner: owner.to_owned(),
            settled: false,
        })
    }

    /// The session `id` took the place `reservation` made.
    pub(super) fn settle(&self, mut reservation: Reservation, id: &str) {
        let mut state = self.state();
        state.unreserve(&reservation.owner);
        state.resident(id, &reservation.owner);
        reservation.settled = true;
    }

    /// A request of `owner` (checked against the store) uses the session `id`, which is in
    /// memory or is about to be restored into a place made for it.
    pub(super) fn use_session(self: &Arc<Self>, id: &str, owner: &str) -> InUse {
        let mut state = self.state();
        let resident = state.resident(id, owner);
        resident.in_use += 1;
        resident.last_used = Instant::now();
        let generation = resident.generation;
        InUse {
            residents: self.clone(),
            id: id.to_owned(),
            generation,
        }
    }

    /// The state; a panic elsewhere while it was held leaves it consistent enough to count
    /// on (and a guard's `Drop` must never panic).
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sessions of `owner` in memory here (made places included).
    #[cfg(test)]
    fn held_by(&self, owner: &str) -> usize {
        self.state().held_by(owner)
    }
}

impl State {
    /// The resident `id`, recorded as `owner`'s if it is new here.
    fn resident(&mut self, id: &str, owner: &str) -> &mut Resident {
        let generation = self.next_generation;
        let resident = self
            .sessions
            .entry(id.to_owned())
            .or_insert_with(|| Resident {
                owner: owner.to_owned(),
                last_used: Instant::now(),
                in_use: 0,
                generation,
            });
        if resident.generation == generation {
            self.next_generation += 1;
        }
        resident
    }

    fn held_by(&self, owner: &str) -> usize {
        let resident = self.sessions.values().filter(|r| r.owner == owner).count();
        resident + self.reserved.get(owner).copied().unwrap_or(0)
    }

    fn total(&self) -> usize {
        self.sessions.len() + self.reserved.values().sum::<usize>()
    }

    /// The sessions to evict so that `owner` may have one more; none evictable: refused.
    fn choose_evictions(
        &mut self,
        owner: &str,
        share: usize,
        cap: usize,
    ) -> Result<Vec<String>, Crowded> {
        let mut evicted = Vec::new();
        if self.held_by(owner) >= share {
            let own = self.least_recently_used_idle(owner).ok_or(Crowded::Share)?;
            evicted.push(self.evict(&own));
        }
        if self.total() >= cap {
            let victim = self
                .least_recently_used_idle(owner)
                .or_else(|| self.heaviest_idle())
                .ok_or(Crowded::Total)?;
            evicted.push(self.evict(&victim));
        }
        Ok(evicted)
    }

    fn evict(&mut self, id: &str) -> String {
        self.sessions.remove(id);
        id.to_owned()
    }

    fn least_recently_used_idle(&self, owner: &str) -> Option<String> {
        self.sessions
            .iter()
            .filter(|(_, r)| r.owner == owner && r.in_use == 0)
            .min_by_key(|(_, r)| r.last_used)
            .map(|(id, _)| id.clone())
    }

    /// The least recently used idle session of the principal with the most sessions here
    /// that has an idle one.
    fn heaviest_idle(&self) -> Option<String> {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for resident in self.sessions.values() {
            *counts.entry(&resident.owner).or_default() += 1;
        }
        let mut owners: Vec<(&str, usize)> = counts.into_iter().collect();
        owners.sort_by_key(|&(_, count)| std::cmp::Reverse(count));
        owners
            .into_iter()
            .find_map(|(owner, _)| self.least_recently_used_idle(owner))
    }

    fn unreserve(&mut self, owner: &str) {
        if let Some(count) = self.reserved.get_mut(owner) {
            *count -= 1;
            if *count == 0 {
                self.reserved.remove(owner);
            }
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.settled {
            self.residents.state().unreserve(&self.owner);
        }
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut state = self.residents.state();
        if let Some(resident) = state.sessions.get_mut(&self.id)
            && resident.generation == self.generation
        {
            resident.in_use = resident.in_use.saturating_sub(1);
            resident.last_used = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> LocalSessionManager {
        LocalSessionManager::default()
    }

    /// Opens a session of `owner` in rmcp's memory and records it as resident.
    async fn open(residents: &Arc<Residents>, memory: &LocalSessionManager, owner: &str) -> String {
        let reservation = residents.make_room(owner, memory).await.expect("room");
        let (id, _transport) = memory.create_session().await.unwrap();
        residents.settle(reservation, &id);
        id.to_string()
    }

    async fn live(memory: &LocalSessionManager) -> usize {
        memory.sessions.read().await.len()
    }

    #[tokio::test]
    async fn a_principal_at_its_share_evicts_its_own_oldest_idle_session() {
        let (residents, memory) = (Residents::new(100, 2), memory());
        let first = open(&residents, &memory, "alice").await;
        let second = open(&residents, &memory, "alice").await;
        let _busy = residents.use_session(&second, "alice");
        let _third = open(&residents, &memory, "alice").await;
        assert_eq!(residents.held_by("alice"), 2);
        assert!(!memory.sessions.read().await.contains_key(first.as_str()));
        assert!(memory.sessions.read().await.contains_key(second.as_str()));
        // Both of hers in use: her next one is refused; others are not affected.
        let _busy_third = residents.use_session(&_third, "alice");
        assert_eq!(
            residents.make_room("alice", &memory).await.err(),
            Some(Crowded::Share)
        );
        open(&residents, &memory, "bob").await;
    }

    #[tokio::test]
    async fn at_the_cap_the_heaviest_principal_makes_room_for_another() {
        let (residents, memory) = (Residents::new(4, 3), memory());
        for _ in 0..3 {
            open(&residents, &memory, "mallory").await;
        }
        let bob = open(&residents, &memory, "bob").await;
        assert_eq!(live(&memory).await, 4);
        let _carol = open(&residents, &memory, "carol").await;
        assert_eq!(live(&memory).await, 4);
        assert_eq!(residents.held_by("mallory"), 2, "mallory gave one up");
        assert!(memory.sessions.read().await.contains_key(bob.as_str()));
        // Bob, at the cap, gives up his own idle session before anyone else's.
        let _bob_again = open(&residents, &memory, "bob").await;
        assert_eq!(residents.held_by("mallory"), 2);
        assert!(!memory.sessions.read().await.contains_key(bob.as_str()));
    }

    #[tokio::test]
    async fn a_request_outliving_its_sessions_eviction_does_not_count_in_the_next_one() {
        let (residents, memory) = (Residents::new(1, 1), memory());
        let first = open(&residents, &memory, "a").await;
        let old_use = residents.use_session(&first, "a");
        // Evicted while still answering (rmcp dropped it), then restored for a new request.
        residents.state().sessions.remove(&first);
        let new_use = residents.use_session(&first, "a");
        drop(old_use);
        assert_eq!(residents.state().sessions[&first].in_use, 1);
        drop(new_use);
        assert_eq!(residents.state().sessions[&first].in_use, 0);
    }

    #[tokio::test]
    async fn nothing_idle_anywhere_is_the_only_refusal_and_a_dropped_reservation_frees_its_place() {
        let (residents, memory) = (Residents::new(2, 2), memory());
        let a = open(&residents, &memory, "a").await;
        let b = open(&residents, &memory, "b").await;
        let (_ua, _ub) = (
            residents.use_session(&a, "a"),
            residents.use_session(&b, "b"),
        );
        assert_eq!(
            residents.make_room("c", &memory).await.err(),
            Some(Crowded::Total)
        );
        drop(_ua);
        let reservation = residents
            .make_room("c", &memory)
            .await
            .expect("a's idle one");
        drop(reservation);
        assert_eq!(residents.held_by("c"), 0);
    }
}
