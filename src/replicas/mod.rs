//! The replicas serving one store, each as it records itself: the public URL it serves, the
//! key it seals with and the keys it opens with, where it listens. A replica writes its record
//! when it starts, refreshes it every [`REFRESH_EVERY`] while it runs and removes it when it
//! stops; a record not refreshed for [`LIVE_FOR_MS`] is a replica that died.
//!
//! Replicas of one store must agree: each opens what the others sealed (a grant, a task, a
//! sign-in under way) and hands out links that any of them serves. [`disagreement`] is the
//! rule a starting replica is held to against the live ones.

pub(crate) mod membership;
pub(crate) mod redis;
pub(crate) mod sql;

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::store::StoreError;

/// How often a running replica refreshes its record.
pub(crate) const REFRESH_EVERY: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a record counts as a live replica's after its last refresh.
pub(crate) const LIVE_FOR_MS: i64 = 30_000;
/// Records older than this are removed by any replica's refresh (a replica that died).
pub(crate) const FORGET_AFTER_MS: i64 = 24 * 3_600_000;

/// One replica's record. Fields a later build adds must read as their default, so that
/// records of both builds read during a rolling upgrade.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Replica {
    /// Random, one per process.
    pub id: String,
    /// The machine's name, for the operator reading a refusal.
    pub host: String,
    /// The address it listens on.
    pub listen: String,
    /// `--public-url`.
    pub public_url: String,
    /// The id of the key it seals with.
    pub sealing_key: String,
    /// The ids of every key it opens with, the sealing key first.
    pub key_ids: Vec<String>,
    /// Unix milliseconds.
    pub started_at_ms: i64,
    pub seen_at_ms: i64,
}

impl Replica {
    /// Whether `other` started first (ties broken by id), so that of two replicas started
    /// at once with different settings exactly one is refused.
    fn started_after(&self, other: &Replica) -> bool {
        (self.started_at_ms, &self.id) > (other.started_at_ms, &other.id)
    }
}

/// A replica as a refusal names it. A replica that died (killed, not stopped) keeps its
/// record for [`LIVE_FOR_MS`]: the refusal says when it was last seen.
impl fmt::Display for Replica {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seen = (grantry_base::clock::unix_now_millis() - self.seen_at_ms).max(0) / 1000;
        write!(
            f,
            "the replica on {} listening on {} (seen {seen} s ago; a replica that died without \
             stopping counts for {} s after that)",
            self.host,
            self.listen,
            LIVE_FOR_MS / 1000
        )
    }
}

/// Where a starting replica differs from a live one, naming the setting to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Disagreement {
    #[error(
        "--public-url (GRANTRY_PUBLIC_URL): this replica's is {mine}, but {peer} serves {theirs} \
         on this store. Give every replica the same public URL (the default, http:// and the \
         --listen address, differs from one replica to the next); to change it, stop every \
         replica first"
    )]
    PublicUrl {
        mine: String,
        theirs: String,
        peer: String,
    },
    #[error(
        "--keys (GRANTRY_KEYS): {peer} seals with key {theirs}, which this replica's key ring \
         ({mine}) lacks, so this replica could not open what it stores. Give every replica \
         the same GRANTRY_KEYS"
    )]
    CannotOpenTheirs {
        mine: String,
        theirs: String,
        peer: String,
    },
    #[error(
        "--keys (GRANTRY_KEYS): this replica would seal with key {mine}, which {peer} (keys \
         {theirs}) cannot open. Give every replica the same GRANTRY_KEYS; to rotate, first \
         add the new key after the current one on every replica, then move it first"
    )]
    TheyCannotOpenMine {
        mine: String,
        theirs: String,
        peer: String,
    },
}

/// Where `me` differs from the first of the live `peers` that started before it, if any: a
/// different public URL, a sealing key `me` cannot open, or a sealing key of `me`'s that the
/// peer cannot open. Rings may differ otherwise: a key rotation adds the new key to every
/// replica's ring before any seals with it.
pub(crate) fn disagreement(me: &Replica, peers: &[Replica]) -> Option<Disagreement> {
    let earlier = peers
        .iter()
        .filter(|peer| peer.id != me.id && me.started_after(peer));
    for peer in earlier {
        let name = peer.to_string();
        if peer.public_url != me.public_url {
            return Some(Disagreement::PublicUrl {
                mine: me.public_url.clone(),
                theirs: peer.public_url.clone(),
                peer: name,
            });
        }
        if !me.key_ids.contains(&peer.sealing_key) {
            return Some(Disagreement::CannotOpenTheirs {
                mine: me.key_ids.join(", "),
                theirs: peer.sealing_key.clone(),
                peer: name,
            });
        }
        if !peer.key_ids.contains(&me.sealing_key) {
            return Some(Disagreement::TheyCannotOpenMine {
                mine: me.sealing_key.clone(),
                theirs: peer.key_ids.join(", "),
                peer: name,
            });
        }
    }
    None
}

/// Storage for the records; one implementation per backend.
#[async_trait]
pub(crate) trait ReplicaBackend: Send + Sync {
    /// Writes `replica`'s record, replacing the one with its id.
    async fn record(&self, replica: &Replica) -> Result<(), StoreError>;
    /// Every record refreshed at or after `seen_since_ms`.
    async fn seen_since(&self, seen_since_ms: i64) -> Result<Vec<Replica>, StoreError>;
    /// Removes the record of `id`.
    async fn remove(&self, id: &str) -> Result<(), StoreError>;
    /// Removes the records last refreshed before `before_ms`; returns how many.
    async fn remove_older(&self, before_ms: i64) -> Result<u64, StoreError>;
}

/// A record as the stores keep it.
fn encode(replica: &Replica) -> String {
    serde_json::to_string(replica).expect("a replica's record serializes")
}

/// The records of `texts` that read; one that does not (a damaged value, a build that
/// wrote another shape) is said in the log and passed over: it must not keep every replica
/// from starting.
fn decode_each<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Replica> {
    texts
        .into_iter()
        .filter_map(|text| {
            decode(text)
                .inspect_err(|e| tracing::warn!(error = %e, "a replica record does not read"))
                .ok()
        })
        .collect()
}

fn decode(text: &str) -> Result<Replica, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("replica record: {e}")))
}

#[cfg(test)]
mod tests;
