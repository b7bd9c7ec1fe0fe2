//! Upkeep of the Redis outbox: the cap on what waits for one endpoint (the oldest parked
//! records dropped first, across lists, by their heads).

use super::{RedisOutbox, decode, endpoint_of};
use crate::outbox::Delivery;
use crate::store::StoreError;

/// Removes the head of `KEYS[1]` if its event id is `ARGV[1]`.
const DROP_HEAD: &str = r"
local head = redis.call('LINDEX', KEYS[1], 0)
if not head or cjson.decode(head).event_id ~= ARGV[1] then return 0 end
redis.call('LPOP', KEYS[1])
return 1
";

/// The most deliveries one [`crate::outbox::OutboxBackend::cap_undelivered`] drops in Redis (one round trip
/// or two each); the next call goes on.
const MAX_DROPPED_AT_ONCE: u64 = 10_000;

/// Which kind of list a record is dropped from.
#[derive(Clone, Copy)]
enum ListKind {
    Parked,
    Pending,
}

impl RedisOutbox {
    /// Keeps at most `keep` undelivered deliveries for `endpoint` (see
    /// [`crate::outbox::OutboxBackend::cap_undelivered`]); how many it dropped.
    pub(super) async fn cap(&self, endpoint: &str, keep: u64) -> Result<u64, StoreError> {
        let pending: Vec<String> = self
            .pending_lists()
            .await?
            .into_iter()
            .filter(|list| endpoint_of(list) == endpoint)
            .collect();
        let parked: Vec<String> = pending
            .iter()
            .map(|list| self.keys.beside(list, "parked"))
            .collect();
        let waiting = self.total_length(parked.iter().chain(&pending)).await?;
        let over = waiting.saturating_sub(keep).min(MAX_DROPPED_AT_ONCE);
        if over == 0 {
            return Ok(0);
        }
        // The oldest parked first (given up on already), then the oldest pending.
        let mut dropped = self.drop_oldest(&parked, over, ListKind::Parked).await?;
        if dropped < over {
            dropped += self
                .drop_oldest(&pending, over - dropped, ListKind::Pending)
                .await?;
        }
        Ok(dropped)
    }

    async fn total_length(&self, lists: impl Iterator<Item = &String>) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        let mut total = 0;
        for list in lists {
            total += redis::cmd("LLEN")
                .arg(list)
                .query_async::<u64>(&mut conn)
                .await?;
        }
        Ok(total)
    }

    /// Drops up to `count` records from `lists`, oldest first across them (each list is in
    /// order, so its head is its oldest); how many it dropped.
    async fn drop_oldest(
        &self,
        lists: &[String],
        count: u64,
        kind: ListKind,
    ) -> Result<u64, StoreError> {
        use std::cmp::Reverse;
        let mut heads = std::collections::BinaryHeap::new();
        for list in lists {
            if let Some(head) = self.head(list).await? {
                heads.push(Reverse((head.created_at, list.as_str(), head.event_id)));
            }
        }
        let mut dropped = 0;
        while dropped < count {
            let Some(Reverse((_, list, event_id))) = heads.pop() else {
                break;
            };
            if self.drop_head(list, &event_id, kind).await? {
                dropped += 1;
            }
            if let Some(head) = self.head(list).await? {
                heads.push(Reverse((head.created_at, list, head.event_id)));
            }
        }
        Ok(dropped)
    }

    async fn head(&self, list: &str) -> Result<Option<Delivery>, StoreError> {
        let mut conn = self.conn.clone();
        let head: Option<String> = redis::cmd("LINDEX")
            .arg(list)
            .arg(0)
            .query_async(&mut conn)
            .await?;
        head.as_deref().map(decode).transpose()
    }

    /// Drops the head of `list` if it is still `event_id`: a parked list's by itself, a
    /// pending list's as its settlement (its due time moves to the next record).
    async fn drop_head(
        &self,
        list: &str,
        event_id: &str,
        kind: ListKind,
    ) -> Result<bool, StoreError> {
        match kind {
            ListKind::Pending => self.settle_head(list, event_id, "dropped", 0, "").await,
            ListKind::Parked => {
                let mut conn = self.conn.clone();
                let removed: i64 = redis::Script::new(DROP_HEAD)
                    .key(list)
                    .arg(event_id)
                    .invoke_async(&mut conn)
                    .await?;
                Ok(removed == 1)
            }
        }
    }
}
