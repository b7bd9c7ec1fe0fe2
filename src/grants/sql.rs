//! Grant rows in the SQL stores (SQLite and PostgreSQL): one implementation, written once for
//! both dialects (`$N` placeholders work in each), expanded per pool type. A write that
//! carries lifecycle events adds them to the outbox atomically with it
//! ([`write_with_events`]).

use async_trait::async_trait;

use super::{GrantBackend, GrantKey, GrantRow, KeyUsage, Reschedule, record::GrantRecord};
use crate::identity::Principal;
use crate::ids::{AccountId, ProviderId};
use crate::outbox::Delivery;
use crate::outbox::sql::write_with_events;
use crate::store::StoreError;

/// The columns a write gives a [`GrantRow`], in its order (a read adds `used_by`, which only
/// `touch` writes).
const ROW: &str = "tokens_sealed, access_expires_at, scopes, version, created_at, updated_at, \
                   key_id, connection_id, state, health, keepalive_at, used_at";
const KEY: &str = "principal_iss = $1 AND principal_sub = $2 AND provider = $3 AND account = $4";

macro_rules! sql_grants {
    ($(#[$doc:meta])* $name:ident, $pool:ty, $dialect:ident) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl GrantBackend for $name {
            fn system(&self) -> &'static str {
                match stringify!($dialect) {
                    "postgres" => "postgresql",
                    _ => "sqlite",
                }
            }

            async fn get(&self, key: &GrantKey) -> Result<Option<GrantRow>, StoreError> {
                let row = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {ROW}, used_by FROM grants WHERE {KEY}"
                )))
                .bind(&key.principal.issuer)
                .bind(&key.principal.subject)
                .bind(key.provider.as_str())
                    .bind(AccountId::text(key.account.as_ref()))
                .fetch_optional(&self.pool)
                .await?;
                Ok(row)
            }

            async fn list(
                &self,
                principal: &Principal,
                provider: &ProviderId,
            ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
                let records: Vec<GrantRecord> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT principal_iss, principal_sub, provider, account, {ROW}, used_by \
                     FROM grants WHERE principal_iss = $1 AND principal_sub = $2 AND provider = $3"
                )))
                .bind(&principal.issuer)
                .bind(&principal.subject)
                .bind(provider.as_str())
                .fetch_all(&self.pool)
                .await?;
                records.into_iter().map(GrantRecord::into_parts).collect()
            }

            async fn all(
                &self,
                principal: Option<&Principal>,
            ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
                let select = format!(
                    "SELECT principal_iss, principal_sub, provider, account, {ROW}, used_by \
                     FROM grants"
                );
                let records: Vec<GrantRecord> = match principal {
                    None => sqlx::query_as(sqlx::AssertSqlSafe(select))
                        .fetch_all(&self.pool)
                        .await?,
                    Some(p) => sqlx::query_as(sqlx::AssertSqlSafe(format!(
                        "{select} WHERE principal_iss = $1 AND principal_sub = $2"
                    )))
                    .bind(&p.issuer)
                    .bind(&p.subject)
                    .fetch_all(&self.pool)
                    .await?,
                };
                records.into_iter().map(GrantRecord::into_parts).collect()
            }

            async fn upsert(&self, key: &GrantKey, row: &GrantRow, events: &[Delivery]) -> Result<(), StoreError> {
                let sql = format!(
                    "INSERT INTO grants (principal_iss, principal_sub, provider, account, {ROW}) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
                     ON CONFLICT (principal_iss, principal_sub, provider, account) DO UPDATE SET \
                     tokens_sealed = excluded.tokens_sealed, access_expires_at = excluded.access_expires_at, \
                     scopes = excluded.scopes, version = CASE WHEN grants.version + 1 > excluded.version \
                     THEN grants.version + 1 ELSE excluded.version END, \
                     created_at = excluded.created_at, updated_at = excluded.updated_at, \
                     key_id = excluded.key_id, connection_id = excluded.connection_id, \
                     state = excluded.state, health = excluded.health, \
                     keepalive_at = excluded.keepalive_at, used_at = excluded.used_at"
                );
                // An upsert always writes its row (and so its events).
                let _written: bool = write_with_events!($dialect, self, sql, 16, events, |q| q
                    .bind(&key.principal.issuer)
                    .bind(&key.principal.subject)
                    .bind(key.provider.as_str())
                    .bind(AccountId::text(key.account.as_ref()))
                    .bind(&row.tokens_sealed)
                    .bind(row.access_expires_at)
                    .bind(&row.scopes)
                    .bind(row.version)
                    .bind(row.created_at)
                    .bind(row.updated_at)
                    .bind(&row.key_id)
                    .bind(&row.connection_id)
                    .bind(&row.state)
                    .bind(&row.health)
                    .bind(row.keepalive_at)
                    .bind(row.used_at));
                Ok(())
            }

            async fn compare_and_set(
                &self,
                key: &GrantKey,
                expected_version: i64,
                row: &GrantRow,
                events: &[Delivery],
            ) -> Result<bool, StoreError> {
                let sql = format!(
                    "UPDATE grants SET tokens_sealed = $5, access_expires_at = $6, scopes = $7, \
                     version = $8, updated_at = $9, key_id = $11, connection_id = $12, state = $13, \
                     health = $14, keepalive_at = $15 \
                     WHERE {KEY} AND version = $10"
                );
                Ok(write_with_events!($dialect, self, sql, 15, events, |q| q
                    .bind(&key.principal.issuer)
                    .bind(&key.principal.subject)
                    .bind(key.provider.as_str())
                    .bind(AccountId::text(key.account.as_ref()))
                    .bind(&row.tokens_sealed)
                    .bind(row.access_expires_at)
                    .bind(&row.scopes)
                    .bind(row.version)
                    .bind(row.updated_at)
                    .bind(expected_version)
                    .bind(&row.key_id)
                    .bind(&row.connection_id)
                    .bind(&row.state)
                    .bind(&row.health)
                    .bind(row.keepalive_at)))
            }

            async fn delete_if_version(
                &self,
                key: &GrantKey,
                version: i64,
                events: &[Delivery],
            ) -> Result<bool, StoreError> {
                let sql = format!("DELETE FROM grants WHERE {KEY} AND version = $5");
                Ok(write_with_events!($dialect, self, sql, 5, events, |q| q
                    .bind(&key.principal.issuer)
                    .bind(&key.principal.subject)
                    .bind(key.provider.as_str())
                    .bind(AccountId::text(key.account.as_ref()))
                    .bind(version)))
            }

            async fn touch(&self, key: &GrantKey, at: i64, by: &str) -> Result<(), StoreError> {
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "UPDATE grants SET used_at = $5, used_by = $6 WHERE {KEY} AND used_at <= $5"
                )))
                .bind(&key.principal.issuer)
                .bind(&key.principal.subject)
                .bind(key.provider.as_str())
                    .bind(AccountId::text(key.account.as_ref()))
                .bind(at)
                .bind(by)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn reschedule(&self, moves: &[Reschedule]) -> Result<(), StoreError> {
                // One commit for the lot: a page of the keep-alive is one disk flush, not 256.
                let mut tx = self.pool.begin().await?;
                for m in moves {
                    sqlx::query(sqlx::AssertSqlSafe(format!(
                        "UPDATE grants SET keepalive_at = $6 WHERE {KEY} AND version = $5"
                    )))
                    .bind(&m.key.principal.issuer)
                    .bind(&m.key.principal.subject)
                    .bind(m.key.provider.as_str())
                    .bind(AccountId::text(m.key.account.as_ref()))
                    .bind(m.version)
                    .bind(m.at)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok(())
            }

            async fn due_for_keepalive(
                &self,
                now: i64,
                limit: usize,
            ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
                let records: Vec<GrantRecord> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT principal_iss, principal_sub, provider, account, {ROW}, used_by FROM grants \
                     WHERE keepalive_at > 0 AND keepalive_at <= $1 ORDER BY keepalive_at LIMIT $2"
                )))
                .bind(now)
                .bind(limit as i64)
                .fetch_all(&self.pool)
                .await?;
                records.into_iter().map(GrantRecord::into_parts).collect()
            }

            async fn count_by_state(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT provider, state, COUNT(*) FROM grants GROUP BY provider, state",
                )
                .fetch_all(&self.pool)
                .await?)
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
                let records: Vec<GrantRecord> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT principal_iss, principal_sub, provider, account, {ROW}, used_by \
                     FROM grants WHERE key_id <> $1 LIMIT $2"
                )))
                .bind(key_id)
                .bind(limit as i64)
                .fetch_all(&self.pool)
                .await?;
                records.into_iter().map(GrantRecord::into_parts).collect()
            }
        }
    };
}

sql_grants!(
    /// Grant rows in SQLite.
    SqliteGrants,
    sqlx::SqlitePool,
    sqlite
);
sql_grants!(
    /// Grant rows in PostgreSQL.
    PostgresGrants,
    sqlx::PgPool,
    postgres
);
