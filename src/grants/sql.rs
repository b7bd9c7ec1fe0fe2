//! Grant rows in the SQL stores (SQLite and PostgreSQL): one implementation, written once for
//! both dialects (`$N` placeholders work in each), expanded per pool type.

use async_trait::async_trait;

use super::{GrantBackend, GrantKey, GrantRow, KeyUsage, record::GrantRecord};
use crate::store::StoreError;

macro_rules! sql_grants {
    ($(#[$doc:meta])* $name:ident, $pool:ty) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl GrantBackend for $name {
            async fn get(&self, key: &GrantKey) -> Result<Option<GrantRow>, StoreError> {
                let row = sqlx::query_as(
                    "SELECT tokens_sealed, access_expires_at, scopes, version, created_at, updated_at, \
                     key_id FROM grants WHERE principal_iss = $1 AND principal_sub = $2 AND provider = $3",
                )
                .bind(&key.principal.issuer)
                .bind(&key.principal.subject)
                .bind(&key.provider)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row)
            }

            async fn upsert(&self, key: &GrantKey, row: &GrantRow) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO grants (principal_iss, principal_sub, provider, tokens_sealed, \
                     access_expires_at, scopes, version, created_at, updated_at, key_id) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                     ON CONFLICT (principal_iss, principal_sub, provider) DO UPDATE SET \
                     tokens_sealed = excluded.tokens_sealed, access_expires_at = excluded.access_expires_at, \
                     scopes = excluded.scopes, version = CASE WHEN grants.version + 1 > excluded.version \
                     THEN grants.version + 1 ELSE excluded.version END, \
                     created_at = excluded.created_at, updated_at = excluded.updated_at, \
                     key_id = excluded.key_id",
                )
                .bind(&key.principal.issuer)
                .bind(&key.principal.subject)
                .bind(&key.provider)
                .bind(&row.tokens_sealed)
                .bind(row.access_expires_at)
                .bind(&row.scopes)
                .bind(row.version)
                .bind(row.created_at)
                .bind(row.updated_at)
                .bind(&row.key_id)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn compare_and_set(
                &self,
                key: &GrantKey,
                expected_version: i64,
                row: &GrantRow,
            ) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "UPDATE grants SET tokens_sealed = $4, access_expires_at = $5, scopes = $6, \
                     version = $7, updated_at = $8, key_id = $10 \
                     WHERE principal_iss = $1 AND principal_sub = $2 AND provider = $3 AND version = $9",
                )
                .bind(&key.principal.issuer)
                .bind(&key.principal.subject)
                .bind(&key.provider)
                .bind(&row.tokens_sealed)
                .bind(row.access_expires_at)
                .bind(&row.scopes)
                .bind(row.version)
                .bind(row.updated_at)
                .bind(expected_version)
                .bind(&row.key_id)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn delete_if_version(&self, key: &GrantKey, version: i64) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "DELETE FROM grants \
                     WHERE principal_iss = $1 AND principal_sub = $2 AND provider = $3 AND version = $4",
                )
                .bind(&key.principal.issuer)
                .bind(&key.principal.subject)
                .bind(&key.provider)
                .bind(version)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn delete(&self, key: &GrantKey) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "DELETE FROM grants WHERE principal_iss = $1 AND principal_sub = $2 AND provider = $3",
                )
                .bind(&key.principal.issuer)
                .bind(&key.principal.subject)
                .bind(&key.provider)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn key_usage(&self) -> Result<KeyUsage, StoreError> {
                Ok(
                    sqlx::query_as("SELECT key_id, COUNT(*) FROM grants GROUP BY key_id ORDER BY key_id")
                        .fetch_all(&self.pool)
                        .await?,
                )
            }

            async fn sealed_under_other_keys(
                &self,
                key_id: &str,
                limit: usize,
            ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
                let records: Vec<GrantRecord> = sqlx::query_as(
                    "SELECT principal_iss, principal_sub, provider, tokens_sealed, access_expires_at, \
                     scopes, version, created_at, updated_at, key_id \
                     FROM grants WHERE key_id <> $1 LIMIT $2",
                )
                .bind(key_id)
                .bind(limit as i64)
                .fetch_all(&self.pool)
                .await?;
                Ok(records.into_iter().map(GrantRecord::into_parts).collect())
            }
        }
    };
}

sql_grants!(
    /// Grant rows in SQLite.
    SqliteGrants,
    sqlx::SqlitePool
);
sql_grants!(
    /// Grant rows in PostgreSQL.
    PostgresGrants,
    sqlx::PgPool
);
