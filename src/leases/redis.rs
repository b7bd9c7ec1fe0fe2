//! Leases in Redis: `SET NX PX`, released only by their holder (compare and delete). With
//! `--redis-min-replicas`, a lease counts as taken once the replicas hold it too: a lease lost
//! in a failover would let a second replica refresh a grant with a refresh token the first
//! already spent.

use crate::store::{RedisConn, Replication};
use async_trait::async_trait;

use super::LeaseBackend;
use crate::store::StoreError;

const ACQUIRE: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
";

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

pub(crate) struct RedisLeases {
    conn: RedisConn,
    prefix: String,
    replication: Replication,
}

impl RedisLeases {
    pub(crate) fn new(conn: RedisConn, prefix: &str, replication: Replication) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
            replication,
        }
    }

    fn key(&self, name: &str) -> String {
        format!("{}lease:{{{name}}}", self.prefix)
    }
}

#[async_trait]
impl LeaseBackend for RedisLeases {
    async fn try_acquire(&self, name: &str, holder: &str, ttl_ms: i64) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let script = redis::Script::new(ACQUIRE);
        let mut invocation = script.key(self.key(name));
        invocation.arg(holder).arg(ttl_ms.max(1));
        Ok(self.replication.write(&mut conn, &invocation).await? == 1)
    }

    async fn release(&self, name: &str, holder: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::Script::new(RELEASE)
            .key(self.key(name))
            .arg(holder)
            .invoke_async::<i64>(&mut conn)
            .await?;
        Ok(())
    }

    async fn is_held(&self, name: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let held: bool = redis::cmd("EXISTS")
            .arg(self.key(name))
            .query_async(&mut conn)
            .await?;
        Ok(held)
    }

    async fn delete_expired(&self) -> Result<u64, StoreError> {
        Ok(0) // `PX`: Redis removes them itself
    }
}
