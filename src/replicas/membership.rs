//! This replica among the others on its store, from its start until it leaves: its record
//! written and refreshed, the live replicas it last saw, and whether it disagrees with one of
//! them (what `/readyz` says).

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::task::AbortHandle;

use super::{
    Disagreement, FORGET_AFTER_MS, LIVE_FOR_MS, REFRESH_EVERY, Replica, ReplicaBackend,
    disagreement,
};
use crate::store::StoreError;

/// Why a replica was not let in.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JoinError {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("{0}")]
    Disagrees(#[from] Disagreement),
}

/// A replica among the others on its store.
pub(crate) struct Membership {
    backend: Arc<dyn ReplicaBackend>,
    seen: Mutex<Seen>,
    refreshing: Mutex<Option<AbortHandle>>,
}

/// What the last refresh wrote and read.
struct Seen {
    me: Replica,
    /// The other live replicas.
    peers: Vec<Replica>,
    /// Where this replica differs from one of them that started first: two started at once
    /// may both have passed the check at start, and the later learns it here.
    disagrees: Option<Disagreement>,
}

impl Membership {
    /// Records `me` and checks it against the live replicas that started before it; one that
    /// disagrees is refused, and its record removed. The record is written before the others
    /// are read, so of two replicas started at once each sees the other, or the later sees
    /// the earlier at its first refresh.
    pub(crate) async fn join(
        backend: Arc<dyn ReplicaBackend>,
        me: Replica,
    ) -> Result<Self, JoinError> {
        backend.record(&me).await?;
        let refusal = match backend.seen_since(me.seen_at_ms - LIVE_FOR_MS).await {
            Ok(live) => disagreement(&me, &live).map(JoinError::from),
            Err(e) => Some(e.into()),
        };
        if let Some(refusal) = refusal {
            if let Err(e) = backend.remove(&me.id).await {
                tracing::warn!(error = %e, "a refused replica's record stays until it ages out");
            }
            return Err(refusal);
        }
        let seen = Seen {
            me,
            peers: Vec::new(),
            disagrees: None,
        };
        Ok(Self {
            backend,
            seen: Mutex::new(seen),
            refreshing: Mutex::new(None),
        })
    }

    /// Refreshes the record every [`REFRESH_EVERY`], reads the live replicas again, and
    /// removes records of replicas dead for [`FORGET_AFTER_MS`], until [`Self::leave`].
    pub(crate) fn spawn_refresh(self: &Arc<Self>) {
        let membership = Arc::downgrade(self);
        let task = tokio::spawn(async move {
            let mut every = tokio::time::interval(REFRESH_EVERY);
            every.tick().await;
            loop {
                every.tick().await;
                let Some(membership) = membership.upgrade() else {
                    return;
                };
                if let Err(e) = membership.refresh().await {
                    tracing::warn!(error = %e, "this replica's record was not refreshed");
                }
            }
        });
        *lock(&self.refreshing) = Some(task.abort_handle());
    }

    async fn refresh(&self) -> Result<(), StoreError> {
        let now = grantry_base::clock::unix_now_millis();
        let me = {
            let mut seen = lock(&self.seen);
            seen.me.seen_at_ms = now;
            seen.me.clone()
        };
        self.backend.record(&me).await?;
        let live = self.backend.seen_since(now - LIVE_FOR_MS).await?;
        let disagrees = disagreement(&me, &live);
        if let Some(why) = &disagrees {
            tracing::error!("this replica disagrees with another: {why}");
        }
        let peers = live.into_iter().filter(|peer| peer.id != me.id).collect();
        {
            let mut seen = lock(&self.seen);
            seen.peers = peers;
            seen.disagrees = disagrees;
        }
        self.backend.remove_older(now - FORGET_AFTER_MS).await?;
        Ok(())
    }

    /// Where this replica disagrees with a live one that started first, as last seen.
    pub(crate) fn disagreement(&self) -> Option<Disagreement> {
        lock(&self.seen).disagrees.clone()
    }

    /// Whether a live replica, as last seen, holds the key `key_id`: a value under it that
    /// this replica cannot open is then this replica's fault (its ring lacks a key the others
    /// use), not a key every replica has retired.
    pub(crate) fn a_peer_holds(&self, key_id: &str) -> bool {
        lock(&self.seen)
            .peers
            .iter()
            .any(|peer| peer.key_ids.iter().any(|id| id == key_id))
    }

    /// Removes the record (its refresh stopped first, so none writes it back): this replica
    /// stops.
    pub(crate) async fn leave(&self) {
        if let Some(refreshing) = lock(&self.refreshing).take() {
            refreshing.abort();
        }
        let id = lock(&self.seen).me.id.clone();
        if let Err(e) = self.backend.remove(&id).await {
            tracing::warn!(error = %e, "this replica's record stays until it ages out");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
