//! Sessions in Redis: one hash per session with a `PEXPIRE`, so Redis drops it on its own.

use async_trait::async_trait;
use redis::aio::ConnectionManager;

use super::{SessionBackend, SessionRecord};
use crate::store::StoreError;

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
    async fn put(&self, id: &str, record: &SessionRecord, ttl_ms: i64) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let key = self.key(id);
        redis::pipe()
            .atomic()
            .del(&key)
            .hset_multiple(
                &key,
                &[("owner", &record.owner), ("initialize", &record.initialize)],
            )
            .pexpire(&key, ttl_ms.max(1))
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    async fn touch(&self, id: &str, ttl_ms: i64) -> Result<Option<SessionRecord>, StoreError> {
        let mut conn = self.conn.clone();
        let key = self.key(id);
        // PEXPIRE first: 0 when the key is gone, and then there is nothing to read.
        let (extended, owner, initialize): (i64, Option<String>, Option<String>) = redis::pipe()
            .pexpire(&key, ttl_ms.max(1))
            .hget(&key, "owner")
            .hget(&key, "initialize")
            .query_async(&mut conn)
            .await?;
        Ok(match (extended, owner, initialize) {
            (1, Some(owner), Some(initialize)) => Some(SessionRecord { owner, initialize }),
            _ => None,
        })
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
