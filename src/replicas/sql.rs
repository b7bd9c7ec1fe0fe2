//! Replicas' records in the SQL stores: one row each, the record as JSON.

use async_trait::async_trait;

use super::{Replica, ReplicaBackend, decode_each, encode};
use crate::store::StoreError;

macro_rules! sql_replicas {
    ($(#[$doc:meta])* $name:ident, $pool:ty) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl ReplicaBackend for $name {
            async fn record(&self, replica: &Replica) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO replicas (id, record, seen_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (id) DO UPDATE SET record = $2, seen_at = $3",
                )
                .bind(&replica.id)
                .bind(encode(replica))
                .bind(replica.seen_at_ms)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn seen_since(&self, seen_since_ms: i64) -> Result<Vec<Replica>, StoreError> {
                let rows: Vec<(String,)> = sqlx::query_as(
                    "SELECT record FROM replicas WHERE seen_at >= $1 ORDER BY id",
                )
                .bind(seen_since_ms)
                .fetch_all(&self.pool)
                .await?;
                Ok(decode_each(rows.iter().map(|(record,)| record.as_str())))
            }

            async fn remove(&self, id: &str) -> Result<(), StoreError> {
                sqlx::query("DELETE FROM replicas WHERE id = $1")
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn remove_older(&self, before_ms: i64) -> Result<u64, StoreError> {
                let done = sqlx::query("DELETE FROM replicas WHERE seen_at < $1")
                    .bind(before_ms)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected())
            }
        }
    };
}

sql_replicas!(
    /// Replicas' records in SQLite.
    SqliteReplicas,
    sqlx::SqlitePool
);
sql_replicas!(
    /// Replicas' records in PostgreSQL.
    PostgresReplicas,
    sqlx::PgPool
);
