//! The blocklist in Redis: one hash, client id to when it was blocked.

use async_trait::async_trait;

use super::{Blocked, BlocklistBackend};
use crate::store::{RedisConn, StoreError};

pub(crate) struct RedisBlocklist {
    conn: RedisConn,
    key: String,
}

impl RedisBlocklist {
    pub(crate) fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            key: format!("{prefix}blocked_clients"),
        }
    }
}

#[async_trait]
impl BlocklistBackend for RedisBlocklist {
    async fn block(&self, client_id: &str, at: i64) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let added: bool = redis::cmd("HSETNX")
            .arg(&self.key)
            .arg(client_id)
            .arg(at)
            .query_async(&mut conn)
            .await?;
        Ok(added)
    }

    async fn unblock(&self, client_id: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let removed: i64 = redis::cmd("HDEL")
            .arg(&self.key)
            .arg(client_id)
            .query_async(&mut conn)
            .await?;
        Ok(removed == 1)
    }

    async fn list(&self) -> Result<Vec<Blocked>, StoreError> {
        let mut conn = self.conn.clone();
        let all: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(&self.key)
            .query_async(&mut conn)
            .await?;
        let mut list = all
            .into_iter()
            .map(|(client_id, at)| {
                let blocked_at = at.parse().map_err(|_| {
                    StoreError::Corrupt("blocked client's time is not a number".into())
                })?;
                Ok(Blocked {
                    client_id,
                    blocked_at,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        list.sort_by(|a, b| a.client_id.cmp(&b.client_id));
        Ok(list)
    }
}
