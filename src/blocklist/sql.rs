//! The blocklist in the SQL stores: one row per blocked client.

use async_trait::async_trait;

use super::{Blocked, BlocklistBackend};
use crate::store::StoreError;

macro_rules! sql_blocklist {
    ($(#[$doc:meta])* $name:ident, $pool:ty) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl BlocklistBackend for $name {
            async fn block(&self, client_id: &str, at: i64) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "INSERT INTO blocked_clients (client_id, blocked_at) VALUES ($1, $2) \
                     ON CONFLICT (client_id) DO NOTHING",
                )
                .bind(client_id)
                .bind(at)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn unblock(&self, client_id: &str) -> Result<bool, StoreError> {
                let done = sqlx::query("DELETE FROM blocked_clients WHERE client_id = $1")
                    .bind(client_id)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn list(&self) -> Result<Vec<Blocked>, StoreError> {
                let rows: Vec<(String, i64)> = sqlx::query_as(
                    "SELECT client_id, blocked_at FROM blocked_clients ORDER BY client_id",
                )
                .fetch_all(&self.pool)
                .await?;
                Ok(rows
                    .into_iter()
                    .map(|(client_id, blocked_at)| Blocked { client_id, blocked_at })
                    .collect())
            }
        }
    };
}

sql_blocklist!(
    /// The blocklist in SQLite.
    SqliteBlocklist,
    sqlx::SqlitePool
);
sql_blocklist!(
    /// The blocklist in PostgreSQL.
    PostgresBlocklist,
    sqlx::PgPool
);
