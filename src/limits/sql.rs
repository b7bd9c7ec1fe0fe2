//! Rate counters in the SQL stores: one row per (key, window), added to by upsert.

use async_trait::async_trait;

use super::CounterBackend;
use crate::store::StoreError;

macro_rules! sql_counters {
    ($(#[$doc:meta])* $name:ident, $pool:ty) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl CounterBackend for $name {
            async fn add(
                &self,
                window: i64,
                deltas: &[(String, u64)],
            ) -> Result<Vec<u64>, StoreError> {
                let mut tx = self.pool.begin().await?;
                let mut totals = Vec::with_capacity(deltas.len());
                for (key, delta) in deltas {
                    let (total,): (i64,) = sqlx::query_as(
                        "INSERT INTO rate_counters (counter_key, window_start, hits) \
                         VALUES ($1, $2, $3) \
                         ON CONFLICT (counter_key, window_start) \
                         DO UPDATE SET hits = rate_counters.hits + excluded.hits \
                         RETURNING hits",
                    )
                    .bind(key)
                    .bind(window)
                    .bind(*delta as i64)
                    .fetch_one(&mut *tx)
                    .await?;
                    totals.push(total.max(0) as u64);
                }
                tx.commit().await?;
                Ok(totals)
            }

            async fn delete_before(&self, window: i64) -> Result<(), StoreError> {
                sqlx::query("DELETE FROM rate_counters WHERE window_start < $1")
                    .bind(window)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn forget(&self, key: &str, _window: i64) -> Result<u64, StoreError> {
                let removed = sqlx::query("DELETE FROM rate_counters WHERE counter_key = $1")
                    .bind(key)
                    .execute(&self.pool)
                    .await?;
                Ok(removed.rows_affected())
            }
        }
    };
}

sql_counters!(
    /// Rate counters in SQLite.
    SqliteCounters,
    sqlx::SqlitePool
);
sql_counters!(
    /// Rate counters in PostgreSQL.
    PostgresCounters,
    sqlx::PgPool
);
