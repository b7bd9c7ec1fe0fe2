//! Sessions in Redis: one hash per session with a `PEXPIRE`, so Redis drops it on its own.
//! Creating and touching are scripts, so each is one atomic step.

use async_trait::async_trait;
use redis::aio::ConnectionManager;

use super::{SessionBackend, SessionRecord};
use crate::store::StoreError;

/// Writes the session unless the id is taken.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'initialize', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// Extends the session only for its owner.
const TOUCH: &str = r"
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
";

pub struct RedisSessions {
    conn: ConnectionManager,
    prefix: String,
}

impl RedisSessions {
    pub fn new(conn: ConnectionManager, prefix: &str) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
        }
    }

    fn key(&self, id: &str) -> String {
        format!("{}mcp_session:{{{id}}}", self.prefix)
    }
}

#[async_trait]
impl SessionBackend for RedisSessions {
    async fn create(
        &self,
        id: &str,
        record: &SessionRecord,
        ttl_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let created: i64 = redis::Script::new(CREATE)
            .key(self.key(id))
            .arg(&record.owner)
            .arg(&record.initialize)
            .arg(ttl_ms.max(1))
            .invoke_async(&mut conn)
            .await?;
        Ok(created == 1)
    }

    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let mut conn = self.conn.clone();
        let (owner, initialize): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(self.key(id))
            .arg("owner")
            .arg("initialize")
            .query_async(&mut conn)
            .await?;
        Ok(owner
            .zip(initialize)
            .map(|(owner, initialize)| SessionRecord { owner, initialize }))
    }

    async fn touch(&self, id: &str, owner: &str, ttl_ms: i64) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let touched: i64 = redis::Script::new(TOUCH)
            .key(self.key(id))
            .arg(owner)
            .arg(ttl_ms.max(1))
            .invoke_async(&mut conn)
            .await?;
        Ok(touched == 1)
    }

    async fn delete_expired(&self) -> Result<u64, StoreError> {
        Ok(0) // Redis drops an expired session by itself (`PEXPIRE`).
    }

    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::cmd("DEL")
            .arg(self.key(id))
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }
}
