//! The outbox in the SQL stores (SQLite and PostgreSQL): the `webhook_outbox` table, written
//! once for both dialects. Grant writes add rows in their own transaction
//! ([`insert_deliveries`]); a claim is one `UPDATE … RETURNING` whose condition is checked
//! again on each row it locks, so two replicas never claim the same row. Claims and outcomes
//! do not wait for the disk on PostgreSQL ([`RELAXED_COMMIT`]).

use async_trait::async_trait;

use super::{Claimed, Delivery, Depth, Filter, Handle, OutboxBackend, Outcome, Status};
use crate::store::StoreError;

/// Adds `$deliveries` (a `&[Delivery]`) to the outbox inside the transaction `$tx`.
macro_rules! insert_deliveries {
    ($tx:expr, $deliveries:expr) => {
        for d in $deliveries {
            sqlx::query(
                "INSERT INTO webhook_outbox (event_id, endpoint, connection, event_type, body, \
                 created_at, status, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7)",
            )
            .bind(&d.event_id)
            .bind(&d.endpoint)
            .bind(&d.connection)
            .bind(&d.event_type)
            .bind(&d.body)
            .bind(d.created_at)
            .bind(d.next_attempt_at)
            .execute(&mut *$tx)
            .await?;
        }
    };
}
pub(crate) use insert_deliveries;

const COLUMNS: &str = "event_id, endpoint, connection, event_type, body, created_at, status, \
                       attempts, next_attempt_at, last_error, delivered_at";

/// Row with its `seq`, as a claim returns it.
#[derive(sqlx::FromRow)]
struct ClaimedRow {
    seq: i64,
    #[sqlx(flatten)]
    delivery: Delivery,
}

macro_rules! sql_outbox {
    ($(#[$doc:meta])* $name:ident, $pool:ty, relaxed: $relaxed:expr) => {
        crate::store::pool_backend!($(#[$doc])* $name, $pool);

        #[async_trait]
        impl OutboxBackend for $name {
            async fn claim(&self, now: i64, limit: usize, claim_secs: i64) -> Result<Vec<Claimed>, StoreError> {
                // The oldest pending row of each (connection, endpoint) that is due and not
                // claimed; the outer conditions are checked again on every row locked.
                let mut tx = self.pool.begin().await?;
                if let Some(relax) = $relaxed {
                    sqlx::query(relax).execute(&mut *tx).await?;
                }
                let rows: Vec<ClaimedRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "UPDATE webhook_outbox SET claimed_until = $2, attempts = attempts + 1 \
                     WHERE status = 'pending' AND next_attempt_at <= $1 AND claimed_until <= $1 \
                     AND seq IN (SELECT o.seq FROM webhook_outbox o \
                       WHERE o.status = 'pending' AND o.next_attempt_at <= $1 AND o.claimed_until <= $1 \
                       AND NOT EXISTS (SELECT 1 FROM webhook_outbox p WHERE p.connection = o.connection \
                         AND p.endpoint = o.endpoint AND p.status = 'pending' AND p.seq < o.seq) \
                       ORDER BY o.seq LIMIT $3) \
                     RETURNING seq, {COLUMNS}"
                )))
                .bind(now)
                .bind(now + claim_secs)
                .bind(limit as i64)
                .fetch_all(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(rows
                    .into_iter()
                    .map(|r| Claimed { delivery: r.delivery, handle: Handle::Row(r.seq) })
                    .collect())
            }

            async fn settle(&self, claimed: &Claimed, outcome: &Outcome) -> Result<(), StoreError> {
                let Handle::Row(seq) = claimed.handle else {
                    return Err(StoreError::Corrupt("a Redis claim settled in SQL".into()));
                };
                let (status, next, error, delivered_at) = match outcome {
                    Outcome::Delivered { at } => (Status::Delivered, 0, "", *at),
                    Outcome::Failed { next_attempt_at, error } => (Status::Pending, *next_attempt_at, error.as_str(), 0),
                    Outcome::Parked { error } => (Status::Parked, 0, error.as_str(), 0),
                };
                let mut tx = self.pool.begin().await?;
                if let Some(relax) = $relaxed {
                    sqlx::query(relax).execute(&mut *tx).await?;
                }
                sqlx::query(
                    "UPDATE webhook_outbox SET status = $2, next_attempt_at = \
                     CASE WHEN $3 = 0 THEN next_attempt_at ELSE $3 END, \
                     last_error = $4, delivered_at = $5, claimed_until = 0 WHERE seq = $1",
                )
                .bind(seq)
                .bind(status.as_str())
                .bind(next)
                .bind(error)
                .bind(delivered_at)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn list(&self, filter: &Filter) -> Result<Vec<Delivery>, StoreError> {
                let rows = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {COLUMNS} FROM webhook_outbox WHERE ($1 = '' OR status = $1) \
                     ORDER BY seq DESC LIMIT $2"
                )))
                .bind(filter.status.map_or("", Status::as_str))
                .bind(filter.limit as i64)
                .fetch_all(&self.pool)
                .await?;
                Ok(rows)
            }

            async fn retry_parked(&self, event_id: Option<&str>, now: i64) -> Result<u64, StoreError> {
                let done = sqlx::query(
                    "UPDATE webhook_outbox SET status = 'pending', attempts = 0, next_attempt_at = $1, \
                     claimed_until = 0 WHERE status = 'parked' AND ($2 = '' OR event_id = $2)",
                )
                .bind(now)
                .bind(event_id.unwrap_or(""))
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected())
            }

            async fn replay(&self, since: i64, now: i64) -> Result<u64, StoreError> {
                let done = sqlx::query(
                    "UPDATE webhook_outbox SET status = 'pending', attempts = 0, next_attempt_at = $2, \
                     delivered_at = 0, claimed_until = 0 WHERE status = 'delivered' AND delivered_at >= $1",
                )
                .bind(since)
                .bind(now)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected())
            }

            async fn depth(&self, now: i64) -> Result<Depth, StoreError> {
                let (pending, parked, oldest): (i64, i64, Option<i64>) = sqlx::query_as(
                    "SELECT COALESCE(SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END), 0), \
                     COALESCE(SUM(CASE WHEN status = 'parked' THEN 1 ELSE 0 END), 0), \
                     MIN(CASE WHEN status = 'pending' THEN created_at END) \
                     FROM webhook_outbox WHERE status <> 'delivered'",
                )
                .fetch_one(&self.pool)
                .await?;
                Ok(Depth {
                    pending,
                    parked: Some(parked),
                    oldest_pending_age: oldest.map_or(0, |at| (now - at).max(0)),
                })
            }

            async fn prune_delivered(&self, before: i64) -> Result<u64, StoreError> {
                let done = sqlx::query(
                    "DELETE FROM webhook_outbox WHERE status = 'delivered' AND delivered_at < $1",
                )
                .bind(before)
                .execute(&self.pool)
                .await?;
                Ok(done.rows_affected())
            }
        }
    };
}

sql_outbox!(
    /// The outbox in SQLite.
    SqliteOutbox,
    sqlx::SqlitePool,
    relaxed: None::<&str>
);
sql_outbox!(
    /// The outbox in PostgreSQL.
    PostgresOutbox,
    sqlx::PgPool,
    relaxed: Some(RELAXED_COMMIT)
);

/// Claims and outcomes commit without waiting for the disk (PostgreSQL): one lost in a crash
/// only means an attempt made again, with the same webhook-id, which delivery at least once
/// allows. The event itself is written with its grant, durably.
const RELAXED_COMMIT: &str = "SET LOCAL synchronous_commit = off";
