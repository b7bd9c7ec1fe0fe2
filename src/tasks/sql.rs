//! Tasks in the SQL stores (SQLite and PostgreSQL): one row per task, written once for both
//! dialects (`$N` placeholders work in each), expanded per pool type.

use async_trait::async_trait;

use super::{StoredTask, TaskBackend, TaskStatus};
use crate::identity::Principal;
use crate::store::StoreError;

/// The columns every query selects, in this order.
const COLUMNS: &str = "id_hash, principal_iss, principal_sub, status, version, created_at, updated_at, expires_at, sealed";

#[derive(sqlx::FromRow)]
struct TaskRecord {
    id_hash: String,
    principal_iss: String,
    principal_sub: String,
    status: String,
    version: i64,
    created_at: i64,
    updated_at: i64,
    expires_at: i64,
    sealed: String,
}

impl TryFrom<TaskRecord> for StoredTask {
    type Error = StoreError;

    fn try_from(r: TaskRecord) -> Result<Self, StoreError> {
        Ok(StoredTask {
            status: TaskStatus::parse(&r.status)?,
            id_hash: r.id_hash,
            principal: Principal {
                issuer: r.principal_iss,
                subject: r.principal_sub,
            },
            version: r.version,
            created_at_ms: r.created_at,
            updated_at_ms: r.updated_at,
            expires_at_ms: r.expires_at,
            sealed: r.sealed,
        })
    }
}

macro_rules! sql_tasks {
    ($(#[$doc:meta])* $name:ident, $pool:ty, system: $system:literal) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl TaskBackend for $name {
            async fn insert(&self, task: &StoredTask) -> Result<(), StoreError> {
                let _span = crate::telemetry::store_span("tasks insert", $system, "insert", "tasks");
                sqlx::query(
                    "INSERT INTO tasks (id_hash, principal_iss, principal_sub, status, version, \
                     created_at, updated_at, expires_at, sealed) \
                     VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8)",
                )
                .bind(&task.id_hash)
                .bind(&task.principal.issuer)
                .bind(&task.principal.subject)
                .bind(task.status.as_str())
                .bind(task.created_at_ms)
                .bind(task.updated_at_ms)
                .bind(task.expires_at_ms)
                .bind(&task.sealed)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn get(&self, id_hash: &str) -> Result<Option<StoredTask>, StoreError> {
                let _span = crate::telemetry::store_span("tasks get", $system, "get", "tasks");
                let record: Option<TaskRecord> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {COLUMNS} FROM tasks WHERE id_hash = $1"
                )))
                .bind(id_hash)
                .fetch_optional(&self.pool)
                .await?;
                record.map(StoredTask::try_from).transpose()
            }

            async fn replace(&self, task: &StoredTask) -> Result<bool, StoreError> {
                let _span = crate::telemetry::store_span("tasks replace", $system, "replace", "tasks");
                let done = sqlx::query(
                    "UPDATE tasks SET status = $3, version = $2 + 1, updated_at = $4, \
                     expires_at = $5, sealed = $6 WHERE id_hash = $1 AND version = $2",
                )
                .bind(&task.id_hash)
                .bind(task.version)
                .bind(task.status.as_str())
                .bind(task.updated_at_ms)
                .bind(task.expires_at_ms)
                .bind(&task.sealed)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn open_of(
                &self,
                principal: &Principal,
                now_ms: i64,
                limit: usize,
            ) -> Result<Vec<StoredTask>, StoreError> {
                let _span = crate::telemetry::store_span("tasks open_of", $system, "select", "tasks");
                let records: Vec<TaskRecord> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {COLUMNS} FROM tasks WHERE principal_iss = $1 AND principal_sub = $2 \
                     AND status IN ($3, $4) AND expires_at > $5 ORDER BY created_at DESC LIMIT $6"
                )))
                .bind(&principal.issuer)
                .bind(&principal.subject)
                .bind(TaskStatus::InputRequired.as_str())
                .bind(TaskStatus::Working.as_str())
                .bind(now_ms)
                .bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .fetch_all(&self.pool)
                .await?;
                records.into_iter().map(StoredTask::try_from).collect()
            }

            async fn live_count(&self, principal: &Principal, now_ms: i64) -> Result<u64, StoreError> {
                let _span = crate::telemetry::store_span("tasks live_count", $system, "select", "tasks");
                let count: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM tasks WHERE principal_iss = $1 AND principal_sub = $2 \
                     AND expires_at > $3",
                )
                .bind(&principal.issuer)
                .bind(&principal.subject)
                .bind(now_ms)
                .fetch_one(&self.pool)
                .await?;
                Ok(u64::try_from(count).unwrap_or_default())
            }

            async fn delete_expired(&self, before_ms: i64) -> Result<u64, StoreError> {
                let done = sqlx::query("DELETE FROM tasks WHERE expires_at < $1")
                    .bind(before_ms)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected())
            }

            async fn forget(&self, principal: &Principal) -> Result<u64, StoreError> {
                let done = sqlx::query(
                    "DELETE FROM tasks WHERE principal_iss = $1 AND principal_sub = $2",
                )
                .bind(&principal.issuer)
                .bind(&principal.subject)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected())
            }
        }
    };
}

sql_tasks!(
    /// Tasks in SQLite.
    SqliteTasks,
    sqlx::SqlitePool,
    system: "sqlite"
);
sql_tasks!(
    /// Tasks in PostgreSQL.
    PostgresTasks,
    sqlx::PgPool,
    system: "postgresql"
);
