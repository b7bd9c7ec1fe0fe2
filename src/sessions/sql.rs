//! Sessions in the SQL stores: one row per session, each operation one statement. Expired
//! rows are never returned; the periodic store cleanup removes them.

use async_trait::async_trait;

use super::{Created, SessionBackend, SessionRecord};
use crate::store::StoreError;

macro_rules! sql_sessions {
    ($(#[$doc:meta])* $name:ident, $pool:ty, now_ms: $now:literal, skip: $skip:literal) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl SessionBackend for $name {
            async fn create(
                &self,
                id: &str,
                record: &SessionRecord,
                ttl_ms: i64,
                keep: usize,
            ) -> Result<Created, StoreError> {
                // An expired row under the same id is overwritten; a live one never is.
                let written = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO mcp_sessions (id, owner, initialize, expires_at_ms) \
                     VALUES ($1, $2, $3, {now} + $4) \
                     ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, \
                     initialize = excluded.initialize, expires_at_ms = excluded.expires_at_ms \
                     WHERE mcp_sessions.expires_at_ms < {now}",
                    now = $now
                )))
                .bind(id)
                .bind(&record.owner)
                .bind(&record.initialize)
                .bind(ttl_ms)
                .execute(&self.pool)
                .await?;
                if written.rows_affected() != 1 {
                    return Ok(Created::Taken);
                }
                // The owner's others, most recently used first; those past `keep - 1` go.
                let forgotten: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "DELETE FROM mcp_sessions WHERE owner = $1 AND id IN (\
                     SELECT id FROM mcp_sessions WHERE owner = $1 AND id <> $2 \
                     ORDER BY expires_at_ms DESC, id {skip} $3) RETURNING id",
                    skip = $skip
                )))
                .bind(&record.owner)
                .bind(id)
                .bind(keep.saturating_sub(1) as i64)
                .fetch_all(&self.pool)
                .await?;
                Ok(Created::Stored {
                    forgotten: forgotten.into_iter().map(|(id,)| id).collect(),
                })
            }

            async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
                let row: Option<(String, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT owner, initialize FROM mcp_sessions \
                     WHERE id = $1 AND expires_at_ms >= {now}",
                    now = $now
                )))
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(|(owner, initialize)| SessionRecord { owner, initialize }))
            }

            async fn touch(&self, id: &str, owner: &str, ttl_ms: i64) -> Result<bool, StoreError> {
                let touched = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "UPDATE mcp_sessions SET expires_at_ms = {now} + $3 \
                     WHERE id = $1 AND owner = $2 AND expires_at_ms >= {now}",
                    now = $now
                )))
                .bind(id)
                .bind(owner)
                .bind(ttl_ms)
                .execute(&self.pool)
                .await?;
                Ok(touched.rows_affected() == 1)
            }

            async fn delete_expired(&self) -> Result<u64, StoreError> {
                let removed = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DELETE FROM mcp_sessions WHERE expires_at_ms < {now}",
                    now = $now
                )))
                .execute(&self.pool)
                .await?;
                Ok(removed.rows_affected())
            }

            async fn delete(&self, id: &str) -> Result<(), StoreError> {
                sqlx::query("DELETE FROM mcp_sessions WHERE id = $1")
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn forget(&self, owner: &str) -> Result<u64, StoreError> {
                let removed = sqlx::query("DELETE FROM mcp_sessions WHERE owner = $1")
                    .bind(owner)
                    .execute(&self.pool)
                    .await?;
                Ok(removed.rows_affected())
            }
        }
    };
}

sql_sessions!(
    /// Sessions in SQLite.
    SqliteSessions,
    sqlx::SqlitePool,
    now_ms: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
    skip: "LIMIT -1 OFFSET"
);
sql_sessions!(
    /// Sessions in PostgreSQL.
    PostgresSessions,
    sqlx::PgPool,
    now_ms: "(extract(epoch from clock_timestamp()) * 1000)::bigint",
    skip: "OFFSET"
);
