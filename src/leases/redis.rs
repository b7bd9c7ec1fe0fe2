//! Leases in Redis: `SET NX PX`, released only by their holder (compare and delete).

use crate::store::RedisConn;
use async_trait::async_trait;

use super::LeaseBackend;
use crate::store::StoreError;

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

pub(crate) struct RedisLeases {
    conn: RedisConn,
    prefix: String,
}

impl RedisLeases {
    pub(crate) fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
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
        let set: Option<String> = redis::cmd("SET")
            .arg(self.key(name))
            .arg(holder)
            .arg("NX")
            .arg("PX")
            .arg(ttl_ms.max(1))
            .query_async(&mut conn)
            .await?;
        Ok(set.is_some())
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
