//! The outbox in the SQL stores (SQLite and PostgreSQL): the `webhook_outbox` table, written
//! once for both dialects. Grant writes add rows atomically with themselves
//! ([`write_with_events`]); a claim is one `UPDATE … RETURNING` whose condition is checked
//! again on each row it locks, so two replicas never claim the same row. Claims and outcomes
//! do not wait for the disk on PostgreSQL ([`crate::store::postgres_relaxed_pool`]): one
//! lost in a crash only means an attempt made again, with the same webhook-id, which
//! delivery at least once allows. The event itself is written with its grant, durably.

use async_trait::async_trait;

use super::{Claimed, Delivery, Depth, Filter, Handle, OutboxBackend, Outcome, Status};
use crate::identity::Principal;
use crate::store::StoreError;

/// Runs a grant write and adds `$events` (a `&[Delivery]`) to the outbox with it, atomically,
/// only if the write touched its row; evaluates to whether it did. `$sql` is the write's text
/// with `$params` parameters, `|q| …` binds them to the query `q`.
///
/// - `postgres`: one statement (the write in a data-modifying `WITH`, the outbox rows from
///   arrays), so a sign-in's callback makes one round trip, as it does with no endpoint.
/// - `sqlite`: a transaction (the store is in the process: there is no round trip to save).
macro_rules! write_with_events {
    (postgres, $self:ident, $sql:expr, $params:expr, $events:expr, |$q:ident| $bind:expr) => {{
        let events: &[$crate::outbox::Delivery] = $events;
        let statement = if events.is_empty() {
            $sql
        } else {
            $crate::outbox::sql::with_outbox_rows(&$sql, $params)
        };
        let $q = sqlx::query(sqlx::AssertSqlSafe(statement));
        let mut query = $bind;
        if !events.is_empty() {
            let column = |f: fn(&$crate::outbox::Delivery) -> &str| {
                events.iter().map(f).collect::<Vec<&str>>()
            };
            query = query
                .bind(column(|d| d.event_id.as_str()))
                .bind(column(|d| d.endpoint.as_str()))
                .bind(column(|d| d.connection.as_str()))
                .bind(column(|d| d.event_type.as_str()))
                .bind(column(|d| d.body.as_str()))
                .bind(events.iter().map(|d| d.created_at).collect::<Vec<i64>>())
                .bind(
                    events
                        .iter()
                        .map(|d| d.next_attempt_at)
                        .collect::<Vec<i64>>(),
                );
        }
        // With events the count is the outbox rows': there are some only if the write was.
        query.execute(&$self.pool).await?.rows_affected() > 0
    }};
    (sqlite, $self:ident, $sql:expr, $params:expr, $events:expr, |$q:ident| $bind:expr) => {{
        let events: &[$crate::outbox::Delivery] = $events;
        let $q = sqlx::query(sqlx::AssertSqlSafe($sql));
        let write = $bind;
        if events.is_empty() {
            write.execute(&$self.pool).await?.rows_affected() > 0
        } else {
            let mut tx = $self.pool.begin().await?;
            // No row touched: the transaction rolls back on drop, and adds no event either.
            if write.execute(&mut *tx).await?.rows_affected() == 0 {
                false
            } else {
                for d in events {
                    sqlx::query(
                        "INSERT INTO webhook_outbox (event_id, endpoint, connection, event_type, \
                         body, created_at, status, next_attempt_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7)",
                    )
                    .bind(&d.event_id)
                    .bind(&d.endpoint)
                    .bind(&d.connection)
                    .bind(&d.event_type)
                    .bind(&d.body)
                    .bind(d.created_at)
                    .bind(d.next_attempt_at)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                true
            }
        }
    }};
}
pub(crate) use write_with_events;

/// PostgreSQL: the grant statement `write` (with `params` parameters) wrapped so the same
/// statement inserts its events' outbox rows, from seven arrays bound after its own
/// parameters, if and only if it touched a row. A data-modifying `WITH` always runs to the
/// end, and the whole statement is one transaction.
pub(crate) fn with_outbox_rows(write: &str, params: usize) -> String {
    let [a, b, c, d, e, f, g] = std::array::from_fn::<usize, 7, _>(|i| params + 1 + i);
    format!(
        "WITH written AS ({write} RETURNING 1) \
         INSERT INTO webhook_outbox (event_id, endpoint, connection, event_type, body, \
         created_at, status, next_attempt_at) \
         SELECT e.event_id, e.endpoint, e.connection, e.event_type, e.body, e.created_at, \
         'pending', e.next_attempt_at \
         FROM unnest(${a}::text[], ${b}::text[], ${c}::text[], ${d}::text[], ${e}::text[], \
         ${f}::int8[], ${g}::int8[]) \
         AS e(event_id, endpoint, connection, event_type, body, created_at, next_attempt_at) \
         WHERE EXISTS (SELECT 1 FROM written)"
    )
}

/// A claim looks at the oldest `limit × CLAIM_WINDOW` due rows.
const CLAIM_WINDOW: usize = 4;

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
    ($(#[$doc:meta])* $name:ident, $pool:ty, principal_in_body: $principal:literal) => {
        $(#[$doc])*
        pub(crate) struct $name {
            pool: $pool,
            /// For claims and outcomes (see [`crate::store::postgres_relaxed_pool`]); the same pool on SQLite.
            relaxed: $pool,
        }

        impl $name {
            pub(crate) fn new(pool: $pool, relaxed: $pool) -> Self {
                Self { pool, relaxed }
            }
        }

        #[async_trait]
        impl OutboxBackend for $name {
            async fn claim(
                &self,
                endpoint: &str,
                now: i64,
                limit: usize,
                claim_secs: i64,
            ) -> Result<Vec<Claimed>, StoreError> {
                // Of the oldest rows that are due and not claimed (a window, so a backlog of
                // one connection costs a sort, not a lookup per row), those that head their
                // (connection, endpoint); the outer conditions are checked again on every row
                // locked.
                let rows: Vec<ClaimedRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "UPDATE webhook_outbox SET claimed_until = $2, attempts = attempts + 1 \
                     WHERE endpoint = $5 AND status = 'pending' AND next_attempt_at <= $1 \
                     AND claimed_until <= $1 \
                     AND seq IN (SELECT o.seq FROM (SELECT seq, connection, endpoint FROM webhook_outbox \
                       WHERE endpoint = $5 AND status = 'pending' AND next_attempt_at <= $1 \
                       AND claimed_until <= $1 ORDER BY seq LIMIT $4) o \
                       WHERE NOT EXISTS (SELECT 1 FROM webhook_outbox p WHERE p.connection = o.connection \
                         AND p.endpoint = o.endpoint AND p.status = 'pending' AND p.seq < o.seq) \
                       ORDER BY o.seq LIMIT $3) \
                     RETURNING seq, {COLUMNS}"
                )))
                .bind(now)
                .bind(now + claim_secs)
                .bind(limit as i64)
                .bind((limit * CLAIM_WINDOW) as i64)
                .bind(endpoint)
                .fetch_all(&self.relaxed)
                .await?;
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
                .execute(&self.relaxed)
                .await?;
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

            async fn depth(&self, _endpoints: &[&str], now: i64) -> Result<Depth, StoreError> {
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

            async fn endpoints_pending(&self) -> Result<Vec<String>, StoreError> {
                let names: Vec<(String,)> = sqlx::query_as(
                    "SELECT DISTINCT endpoint FROM webhook_outbox WHERE status = 'pending'",
                )
                .fetch_all(&self.pool)
                .await?;
                Ok(names.into_iter().map(|(name,)| name).collect())
            }

            async fn cap_undelivered(&self, endpoint: &str, keep: u64, _now: i64) -> Result<u64, StoreError> {
                let (waiting,): (i64,) = sqlx::query_as(
                    "SELECT COUNT(*) FROM webhook_outbox WHERE endpoint = $1 AND status <> 'delivered'",
                )
                .bind(endpoint)
                .fetch_one(&self.pool)
                .await?;
                let over = waiting - keep as i64;
                if over <= 0 {
                    return Ok(0);
                }
                // The oldest parked first (given up on already), then the oldest pending.
                let dropped = sqlx::query(
                    "DELETE FROM webhook_outbox WHERE seq IN (SELECT seq FROM webhook_outbox \
                     WHERE endpoint = $1 AND status <> 'delivered' \
                     ORDER BY CASE WHEN status = 'parked' THEN 0 ELSE 1 END, seq LIMIT $2)",
                )
                .bind(endpoint)
                .bind(over)
                .execute(&self.pool)
                .await?;
                Ok(dropped.rows_affected())
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

            async fn forget(&self, principal: &Principal) -> Result<u64, StoreError> {
                let done = sqlx::query(concat!("DELETE FROM webhook_outbox WHERE ", $principal))
                    .bind(&principal.issuer)
                    .bind(&principal.subject)
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
    principal_in_body: "json_extract(body, '$.data.principal.iss') = $1 \
                        AND json_extract(body, '$.data.principal.sub') = $2"
);
sql_outbox!(
    /// The outbox in PostgreSQL.
    PostgresOutbox,
    sqlx::PgPool,
    principal_in_body: "(body::jsonb) #>> '{data,principal,iss}' = $1 \
                        AND (body::jsonb) #>> '{data,principal,sub}' = $2"
);
