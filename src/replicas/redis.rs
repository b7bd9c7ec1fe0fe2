//! Replicas' records in Redis: one hash, replica id to its record as JSON (one key, so
//! every command is a single-key one on a Cluster too).

use async_trait::async_trait;

use super::{Replica, ReplicaBackend, decode, decode_each, encode};
use crate::store::{RedisConn, StoreError};

pub(crate) struct RedisReplicas {
    conn: RedisConn,
    key: String,
}

impl RedisReplicas {
    pub(crate) fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            key: format!("{prefix}replicas"),
        }
    }

    /// Every record, by the id it is kept under.
    async fn all(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut conn = self.conn.clone();
        Ok(redis::cmd("HGETALL")
            .arg(&self.key)
            .query_async(&mut conn)
            .await?)
    }
}

#[async_trait]
impl ReplicaBackend for RedisReplicas {
    async fn record(&self, replica: &Replica) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let _: i64 = redis::cmd("HSET")
            .arg(&self.key)
            .arg(&replica.id)
            .arg(encode(replica))
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    async fn seen_since(&self, seen_since_ms: i64) -> Result<Vec<Replica>, StoreError> {
        let all = self.all().await?;
        let mut live: Vec<Replica> = decode_each(all.iter().map(|(_, record)| record.as_str()))
            .into_iter()
            .filter(|replica| replica.seen_at_ms >= seen_since_ms)
            .collect();
        live.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(live)
    }

    async fn remove(&self, id: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let _: i64 = redis::cmd("HDEL")
            .arg(&self.key)
            .arg(id)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    async fn remove_older(&self, before_ms: i64) -> Result<u64, StoreError> {
        // Old records, and damaged ones (which no replica refreshes).
        let stale: Vec<String> = self
            .all()
            .await?
            .into_iter()
            .filter(|(_, record)| match decode(record) {
                Ok(replica) => replica.seen_at_ms < before_ms,
                Err(_) => true,
            })
            .map(|(id, _)| id)
            .collect();
        if stale.is_empty() {
            return Ok(0);
        }
        let mut conn = self.conn.clone();
        let removed: u64 = redis::cmd("HDEL")
            .arg(&self.key)
            .arg(&stale)
            .query_async(&mut conn)
            .await?;
        Ok(removed)
    }
}
