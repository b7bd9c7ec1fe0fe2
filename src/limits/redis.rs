//! Rate counters in Redis: one integer per (key, window), expiring on its own two windows
//! later, so nothing needs cleaning up. Each counter in a pipeline of its own, side by side
//! (a cluster's pipeline keeps to one slot).

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
        let counted = futures::future::try_join_all(deltas.iter().map(|(key, delta)| {
            let key = format!("{}rate:{{{key}}}:{window}", self.prefix);
            let mut pipe = redis::pipe();
            pipe.incr(&key, *delta)
                .expire(&key, 2 * WINDOW_SECS)
                .ignore();
            let mut conn = self.conn.clone();
            async move { pipe.query_async::<(u64,)>(&mut conn).await }
        }))
        .await?;
        Ok(counted.into_iter().map(|(n,)| n).collect())
    }

    async fn delete_before(&self, _window: i64) -> Result<(), StoreError> {
        Ok(()) // every counter carries its own expiry
    }

    async fn forget(&self, key: &str, window: i64) -> Result<u64, StoreError> {
        // A counter lives two windows past its own; the next one may have begun meanwhile.
        let removed = futures::future::try_join_all((window - 2..=window + 1).map(|w| {
            let mut conn = self.conn.clone();
            let name = format!("{}rate:{{{key}}}:{w}", self.prefix);
            async move {
                redis::cmd("DEL")
                    .arg(name)
                    .query_async::<u64>(&mut conn)
                    .await
            }
        }))
        .await?;
        Ok(removed.into_iter().sum())
    }
}
