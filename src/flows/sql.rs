//! Flows in the SQL stores (SQLite and PostgreSQL): one implementation, written once for both
//! dialects (`$N` placeholders work in each), expanded per pool type.

use async_trait::async_trait;

use super::record::{COLUMNS, FlowRecord, missed_claim};
use super::{Claim, Flow, FlowBackend, FlowStatus};
use crate::identity::Principal;
use crate::store::StoreError;

macro_rules! sql_flows {
    ($(#[$doc:meta])* $name:ident, $pool:ty, system: $system:literal, newest_first: $newest_first:literal, ping: $ping:literal) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl FlowBackend for $name {
            async fn insert(&self, flow: &Flow) -> Result<(), StoreError> {
                let _span = crate::telemetry::store_span("flows insert", $system, "insert", "flows");
                sqlx::query(
                    "INSERT INTO flows (id, ticket_id, principal_iss, principal_sub, provider, \
                     verifier_sealed, state_hash, binding_hash, status, created_at, expires_at, scopes, handout) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                )
                .bind(&flow.id)
                .bind(&flow.ticket_id)
                .bind(&flow.principal.issuer)
                .bind(&flow.principal.subject)
                .bind(flow.provider.as_str())
                .bind(&flow.verifier_sealed)
                .bind(&flow.state_hash)
                .bind(&flow.binding_hash)
                .bind(flow.status.as_str())
                .bind(flow.created_at)
                .bind(flow.expires_at)
                .bind(flow.scopes.join(" "))
                .bind(flow.handout.as_str())
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn claim(&self, state_hash: &str, now: i64) -> Result<Claim, StoreError> {
                let _span = crate::telemetry::store_span("flows claim", $system, "claim", "flows");
                let claimed: Option<FlowRecord> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "UPDATE flows SET status = 'redeeming', claimed_at = $2 \
                     WHERE state_hash = $1 AND status = 'pending' AND expires_at >= $2 \
                     RETURNING {COLUMNS}"
                )))
                .bind(state_hash)
                .bind(now)
                .fetch_optional(&self.pool)
                .await?;
                if let Some(record) = claimed {
                    return Ok(Claim::Claimed(Box::new(record.try_into()?)));
                }
                let existing: Option<FlowRecord> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {COLUMNS} FROM flows WHERE state_hash = $1"
                )))
                .bind(state_hash)
                .fetch_optional(&self.pool)
                .await?;
                match existing {
                    None => Ok(Claim::Unknown),
                    Some(record) => Ok(missed_claim(record.try_into()?, now)),
                }
            }

            async fn finish(&self, flow_id: &str, status: FlowStatus) -> Result<(), StoreError> {
                let _span = crate::telemetry::store_span("flows finish", $system, "finish", "flows");
                sqlx::query("UPDATE flows SET status = $2 WHERE id = $1")
                    .bind(flow_id)
                    .bind(status.as_str())
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn fail_stuck(&self, flow: &Flow, claimed_before: i64) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "UPDATE flows SET status = 'failed' WHERE id = $1 AND status = 'redeeming' \
                     AND (claimed_at IS NULL OR claimed_at < $2)",
                )
                .bind(&flow.id)
                .bind(claimed_before)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn supersede_pending(
                &self,
                principal: &Principal,
                keep: u32,
            ) -> Result<u64, StoreError> {
                let done = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "UPDATE flows SET status = 'superseded' \
                     WHERE principal_iss = $1 AND principal_sub = $2 AND status = 'pending' \
                     AND id NOT IN (SELECT id FROM flows \
                       WHERE principal_iss = $1 AND principal_sub = $2 AND status = 'pending' \
                       ORDER BY {} LIMIT $3)",
                    $newest_first
                )))
                .bind(&principal.issuer)
                .bind(&principal.subject)
                .bind(i64::from(keep))
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected())
            }

            async fn latest_for_ticket(&self, ticket_id: &str) -> Result<Option<Flow>, StoreError> {
                let record: Option<FlowRecord> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {COLUMNS} FROM flows WHERE ticket_id = $1 \
                     ORDER BY {} LIMIT 1",
                    $newest_first
                )))
                .bind(ticket_id)
                .fetch_optional(&self.pool)
                .await?;
                record.map(Flow::try_from).transpose()
            }

            async fn delete_expired(&self, before: i64) -> Result<u64, StoreError> {
                let done = sqlx::query("DELETE FROM flows WHERE expires_at < $1")
                    .bind(before)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected())
            }

            async fn forget(&self, principal: &Principal) -> Result<u64, StoreError> {
                let done = sqlx::query(
                    "DELETE FROM flows WHERE principal_iss = $1 AND principal_sub = $2",
                )
                .bind(&principal.issuer)
                .bind(&principal.subject)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected())
            }

            async fn ping(&self) -> Result<(), StoreError> {
                let writable: Option<i32> = sqlx::query_scalar($ping)
                    .fetch_optional(&self.pool)
                    .await?;
                writable.map(|_| ()).ok_or_else(|| {
                    StoreError::Unavailable("the database is a standby: it takes no writes".into())
                })
            }
        }
    };
}

sql_flows!(
    /// Flows in SQLite.
    SqliteFlows,
    sqlx::SqlitePool,
    system: "sqlite",
    newest_first: "created_at DESC, rowid DESC",
    ping: "SELECT 1"
);
sql_flows!(
    /// Flows in PostgreSQL.
    PostgresFlows,
    sqlx::PgPool,
    system: "postgresql",
    newest_first: "created_at DESC, seq DESC",
    // A promoted standby's old primary, or a standby a proxy sent us to, takes no writes.
    ping: "SELECT 1 WHERE NOT pg_is_in_recovery()"
);
