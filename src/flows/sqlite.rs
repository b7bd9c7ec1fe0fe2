//! Flows in SQLite.

use async_trait::async_trait;
use sqlx::{Row, SqlitePool, sqlite::SqliteRow};

use super::{Claim, Flow, FlowBackend, FlowStatus};
use crate::identity::Principal;
use crate::store::StoreError;

pub struct SqliteFlows {
    pool: SqlitePool,
}

impl SqliteFlows {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }
}

const COLUMNS: &str = "id, ticket_id, principal_iss, principal_sub, provider, verifier_sealed, \
     state_hash, binding_hash, status, created_at, expires_at";

fn flow_from_row(row: &SqliteRow) -> Result<Flow, StoreError> {
    Ok(Flow {
        id: row.try_get("id")?,
        ticket_id: row.try_get("ticket_id")?,
        principal: Principal {
            issuer: row.try_get("principal_iss")?,
            subject: row.try_get("principal_sub")?,
        },
        provider: row.try_get("provider")?,
        verifier_sealed: row.try_get("verifier_sealed")?,
        state_hash: row.try_get("state_hash")?,
        binding_hash: row.try_get("binding_hash")?,
        status: FlowStatus::parse(row.try_get::<&str, _>("status")?)?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

#[async_trait]
impl FlowBackend for SqliteFlows {
    async fn insert(&self, flow: &Flow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO flows (id, ticket_id, principal_iss, principal_sub, provider, \
             verifier_sealed, state_hash, binding_hash, status, created_at, expires_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .bind(&flow.id)
        .bind(&flow.ticket_id)
        .bind(&flow.principal.issuer)
        .bind(&flow.principal.subject)
        .bind(&flow.provider)
        .bind(&flow.verifier_sealed)
        .bind(&flow.state_hash)
        .bind(&flow.binding_hash)
        .bind(flow.status.as_str())
        .bind(flow.created_at)
        .bind(flow.expires_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn claim(&self, state_hash: &str, now: i64) -> Result<Claim, StoreError> {
        let claimed = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE flows SET status = 'redeeming' \
             WHERE state_hash = ?1 AND status = 'pending' AND expires_at >= ?2 \
             RETURNING {COLUMNS}"
        )))
        .bind(state_hash)
        .bind(now)
        .fetch_optional(&self.pool)
        .await?;
        if let Some(row) = claimed {
            return Ok(Claim::Claimed(Box::new(flow_from_row(&row)?)));
        }
        let existing = sqlx::query("SELECT status, expires_at FROM flows WHERE state_hash = ?1")
            .bind(state_hash)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match existing {
            None => Claim::Unknown,
            Some(row) => {
                let status = FlowStatus::parse(row.try_get::<&str, _>("status")?)?;
                let expires_at: i64 = row.try_get("expires_at")?;
                if status == FlowStatus::Pending && expires_at < now {
                    Claim::Expired
                } else {
                    Claim::AlreadyUsed(status)
                }
            }
        })
    }

    async fn finish(&self, flow_id: &str, status: FlowStatus) -> Result<(), StoreError> {
        sqlx::query("UPDATE flows SET status = ?2 WHERE id = ?1")
            .bind(flow_id)
            .bind(status.as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn latest_for_ticket(&self, ticket_id: &str) -> Result<Option<Flow>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM flows WHERE ticket_id = ?1 \
             ORDER BY created_at DESC, rowid DESC LIMIT 1"
        )))
        .bind(ticket_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(flow_from_row).transpose()
    }

    async fn delete_expired(&self, before: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM flows WHERE expires_at < ?1")
            .bind(before)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}
