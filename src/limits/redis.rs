//! Rate counters in Redis: one integer per (key, window), expiring on its own two windows
//! later, so nothing needs cleaning up. One key per command, so Redis Cluster works too.

use crate::store::RedisConn;
use async_trait::async_trait;

use super::{CounterBackend, WINDOW_SECS};
use crate::store::StoreError;

pub(crate) struct RedisCounters {
    conn: RedisConn,
    prefix: String,
}

impl RedisCounters {
    pub(crate) fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
        }
    }
}

#[async_trait]
impl CounterBackend for RedisCounters {
    async fn add(&self, window: i64, deltas: &[(String, u64)]) -> Result<Vec<u64>, StoreError> {
        let mut pipe = redis::pipe();
        for (key, delta) in deltas {
            let key = format!("{}rate:{{{key}}}:{window}", self.prefix);
            pipe.incr(&key, *delta)
                .expire(&key, 2 * WINDOW_SECS)
                .ignore();
        }
        let mut conn = self.conn.clone();
        Ok(pipe.query_async(&mut conn).await?)
    }

    async fn delete_before(&self, _window: i64) -> Result<(), StoreError> {
        Ok(()) // every counter carries its own expiry
    }
}
