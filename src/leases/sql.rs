//! Leases in the SQL stores: one row per lease; taking one is an upsert that only overwrites
//! an expired row, so exactly one caller sees its row come back.

use async_trait::async_trait;

use super::LeaseBackend;
use crate::clock::unix_now_millis;
use crate::store::StoreError;

macro_rules! sql_leases {
    ($(#[$doc:meta])* $name:ident, $pool:ty) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl LeaseBackend for $name {
            async fn try_acquire(
                &self,
                name: &str,
                holder: &str,
                ttl_ms: i64,
            ) -> Result<bool, StoreError> {
                let now = unix_now_millis();
                let taken: Option<(String,)> = sqlx::query_as(
                    "INSERT INTO leases (name, holder, expires_at_ms) VALUES ($1, $2, $3) \
                     ON CONFLICT (name) DO UPDATE \
                     SET holder = excluded.holder, expires_at_ms = excluded.expires_at_ms \
                     WHERE leases.expires_at_ms < $4 \
                     RETURNING holder",
                )
                .bind(name)
                .bind(holder)
                .bind(now + ttl_ms)
                .bind(now)
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
        }
    };
}

sql_leases!(
    /// Leases in SQLite.
    SqliteLeases,
    sqlx::SqlitePool
);
sql_leases!(
    /// Leases in PostgreSQL.
    PostgresLeases,
    sqlx::PgPool
);
