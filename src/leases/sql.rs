//! Leases in the SQL stores: one row per lease; taking one is an upsert that only overwrites
//! an expired row, so exactly one caller sees its row come back. Time is the database's own
//! clock, so replicas whose clocks disagree still agree on when a lease ends.

use async_trait::async_trait;

use super::LeaseBackend;
use crate::store::StoreError;

macro_rules! sql_leases {
    ($(#[$doc:meta])* $name:ident, $pool:ty, now_ms: $now:literal) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl LeaseBackend for $name {
            async fn try_acquire(
                &self,
                name: &str,
                holder: &str,
                ttl_ms: i64,
            ) -> Result<bool, StoreError> {
                let taken: Option<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO leases (name, holder, expires_at_ms) VALUES ($1, $2, {now} + $3) \
                     ON CONFLICT (name) DO UPDATE \
                     SET holder = excluded.holder, expires_at_ms = excluded.expires_at_ms \
                     WHERE leases.expires_at_ms < {now} \
                     RETURNING holder",
                    now = $now
                )))
                .bind(name)
                .bind(holder)
                .bind(ttl_ms)
                .fetch_optional(&self.pool)
                .await?;
                Ok(taken.is_some_and(|(h,)| h == holder))
            }

            async fn release(&self, name: &str, holder: &str) -> Result<(), StoreError> {
                sqlx::query("DELETE FROM leases WHERE name = $1 AND holder = $2")
                    .bind(name)
                    .bind(holder)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn is_held(&self, name: &str) -> Result<bool, StoreError> {
                let held: Option<(i64,)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT expires_at_ms FROM leases WHERE name = $1 AND expires_at_ms >= {now}",
                    now = $now
                )))
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
                Ok(held.is_some())
            }

            async fn delete_expired(&self) -> Result<u64, StoreError> {
                let done = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DELETE FROM leases WHERE expires_at_ms < {now}",
                    now = $now
                )))
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected())
            }
        }
    };
}

sql_leases!(
    /// Leases in SQLite.
    SqliteLeases,
    sqlx::SqlitePool,
    now_ms: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
);
sql_leases!(
    /// Leases in PostgreSQL.
    PostgresLeases,
    sqlx::PgPool,
    now_ms: "(extract(epoch from clock_timestamp()) * 1000)::bigint"
);
