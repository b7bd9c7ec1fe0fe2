//! The outbox in Redis, in the buckets of [`crate::store::redis::layout`]. Deliveries wait in
//! one list per (connection, endpoint), `outbox:{T}:CONN:ENDPOINT`, in the bucket of the
//! connection's grant, so the grant's own script appends them atomically with the change, and
//! the list's order is the connection's order. Per bucket, a sorted set per endpoint,
//! `outbox-due:{T}:ENDPOINT`, holds the lists with work and when each head is due; a claim
//! pushes that time past the claim, so one replica works a list at a time, and each endpoint
//! is claimed for on its own. Delivered records move to a short log (`outbox-log:…`, the last
//! [`LOG_KEPT`]), parked ones to `outbox-parked:…`. Every key a script touches is in one
//! bucket: one slot, on a cluster too; what looks across the outbox reads bucket by bucket
//! (each bucket's `outbox-lists` and `outbox-endpoints`), never `SCAN`.

use async_trait::async_trait;
use futures::future::try_join_all;

mod forget;
mod upkeep;

use super::{Claimed, Delivery, Depth, Filter, Handle, OutboxBackend, Outcome};
use crate::store::redis::layout::{Bucket, Keys};
use crate::store::{RedisConn, StoreError};

/// Delivered records kept per (connection, endpoint), for `events list` and `events replay`.
pub(crate) const LOG_KEPT: i64 = 20;

/// Appends the deliveries given after the fixed arguments to their lists, marks each list due
/// from its record's first attempt (unless the list is already due), and files the list and
/// its endpoint in the bucket's indexes. Used from the grant scripts: `KEYS[lists]` and
/// `KEYS[endpoints]` are the bucket's outbox lists and endpoints; from KEYS index `pairs_from`
/// come pairs (a delivery's list, its endpoint's due set; [`delivery_keys`]), from ARGV index
/// `args_from` the records, one per pair.
pub(crate) fn append_lua(
    lists: usize,
    endpoints: usize,
    pairs_from: usize,
    args_from: usize,
) -> String {
    format!(
        "for i = {pairs_from}, #KEYS, 2 do \
           local record = ARGV[{args_from} + (i - {pairs_from}) / 2] \
           local rec = cjson.decode(record) \
           redis.call('RPUSH', KEYS[i], record) \
           redis.call('ZADD', KEYS[i + 1], 'NX', rec.next_attempt_at, KEYS[i]) \
           redis.call('SADD', KEYS[{lists}], KEYS[i]) \
           redis.call('SADD', KEYS[{endpoints}], rec.endpoint) \
         end"
    )
}

/// The keys [`append_lua`] takes for `delivery` of a grant in `bucket`: its list, then its
/// endpoint's due set.
pub(crate) fn delivery_keys(keys: &Keys, bucket: Bucket, delivery: &Delivery) -> [String; 2] {
    [
        keys.outbox(bucket, &delivery.connection, &delivery.endpoint),
        keys.outbox_due(bucket, &delivery.endpoint),
    ]
}

const CLAIM: &str = r"
local score = redis.call('ZSCORE', KEYS[2], KEYS[1])
if not score or tonumber(score) > tonumber(ARGV[1]) then return false end
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then redis.call('ZREM', KEYS[2], KEYS[1]) return false end
local rec = cjson.decode(head)
rec.attempts = rec.attempts + 1
redis.call('LSET', KEYS[1], 0, cjson.encode(rec))
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
return cjson.encode(rec)
";

/// KEYS: pending list, due set, log, parked. ARGV: event id, outcome (`failed`, `delivered`,
/// `parked`, or `dropped`: gone, past the endpoint's cap), time, error, log size. The next
/// record (if any) is due at its own next attempt.
const SETTLE: &str = r"
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then return 0 end
local rec = cjson.decode(head)
if rec.event_id ~= ARGV[1] then return 0 end
rec.last_error = ARGV[4]
if ARGV[2] == 'failed' then
  rec.next_attempt_at = tonumber(ARGV[3])
  redis.call('LSET', KEYS[1], 0, cjson.encode(rec))
  redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
  return 1
end
redis.call('LPOP', KEYS[1])
if ARGV[2] == 'delivered' then
  rec.status = 'delivered'
  rec.delivered_at = tonumber(ARGV[3])
  redis.call('RPUSH', KEYS[3], cjson.encode(rec))
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[5]), -1)
elseif ARGV[2] == 'parked' then
  rec.status = 'parked'
  redis.call('RPUSH', KEYS[4], cjson.encode(rec))
end
local nxt = redis.call('LINDEX', KEYS[1], 0)
if nxt then
  redis.call('ZADD', KEYS[2], cjson.decode(nxt).next_attempt_at, KEYS[1])
else
  redis.call('ZREM', KEYS[2], KEYS[1])
end
return 1
";

/// Moves records from `KEYS[1]` (parked or log) back to the pending list `KEYS[2]`: those whose
/// event id is `ARGV[2]` ('' for all) and, from a log, delivered at or after `ARGV[3]`. Parked
/// records go first (they are older than what waits), replayed ones last.
const REQUEUE: &str = r"
local moved = {}
local kept = {}
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local rec = cjson.decode(raw)
  if (ARGV[2] == '' or rec.event_id == ARGV[2]) and rec.delivered_at >= tonumber(ARGV[3]) then
    rec.status = 'pending'
    rec.attempts = 0
    rec.delivered_at = 0
    rec.next_attempt_at = tonumber(ARGV[1])
    table.insert(moved, cjson.encode(rec))
  else
    table.insert(kept, raw)
  end
end
if #moved == 0 then return 0 end
redis.call('DEL', KEYS[1])
if #kept > 0 then redis.call('RPUSH', KEYS[1], unpack(kept)) end
if ARGV[4] == 'front' then
  for i = #moved, 1, -1 do redis.call('LPUSH', KEYS[2], moved[i]) end
  redis.call('ZADD', KEYS[3], ARGV[1], KEYS[2])
else
  redis.call('RPUSH', KEYS[2], unpack(moved))
  redis.call('ZADD', KEYS[3], 'NX', ARGV[1], KEYS[2])
end
return #moved
";

pub(crate) struct RedisOutbox {
    conn: RedisConn,
    keys: Keys,
}

impl RedisOutbox {
    pub(crate) fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            keys: Keys::new(prefix),
        }
    }

    /// The due set a pending `list` is filed in.
    fn due_of(&self, list: &str) -> Result<String, StoreError> {
        let bucket = Bucket::in_key(list).ok_or_else(|| {
            StoreError::Corrupt(format!("an outbox list outside any bucket: {list}"))
        })?;
        Ok(self.keys.outbox_due(bucket, endpoint_of(list)))
    }

    /// The pending lists of every bucket (some may be empty since).
    async fn pending_lists(&self) -> Result<Vec<String>, StoreError> {
        let per_bucket = try_join_all(Bucket::all().map(|bucket| {
            let mut conn = self.conn.clone();
            let index = self.keys.outbox_lists(bucket);
            async move {
                redis::cmd("SMEMBERS")
                    .arg(index)
                    .query_async::<Vec<String>>(&mut conn)
                    .await
            }
        }))
        .await?;
        Ok(per_bucket.into_iter().flatten().collect())
    }

    async fn claim_list(
        &self,
        list: &str,
        now: i64,
        claim_until: i64,
    ) -> Result<Option<Claimed>, StoreError> {
        let mut conn = self.conn.clone();
        let record: Option<String> = redis::Script::new(CLAIM)
            .key(list)
            .key(self.due_of(list)?)
            .arg(now)
            .arg(claim_until)
            .invoke_async(&mut conn)
            .await?;
        record
            .map(|r| {
                Ok(Claimed {
                    delivery: decode(&r)?,
                    handle: Handle::List(list.to_owned()),
                })
            })
            .transpose()
    }

    /// Up to `limit` lists with work for `endpoint` due by `now`, from every bucket.
    async fn due_lists(
        &self,
        endpoint: &str,
        now: i64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let per_bucket = try_join_all(Bucket::all().map(|bucket| {
            let mut conn = self.conn.clone();
            let due = self.keys.outbox_due(bucket, endpoint);
            async move {
                redis::cmd("ZRANGEBYSCORE")
                    .arg(due)
                    .arg("-inf")
                    .arg(now)
                    .arg("LIMIT")
                    .arg(0)
                    .arg(limit)
                    .query_async::<Vec<String>>(&mut conn)
                    .await
            }
        }))
        .await?;
        let mut lists: Vec<String> = per_bucket.into_iter().flatten().collect();
        lists.truncate(limit);
        Ok(lists)
    }

    /// Moves records from the list of `kind` beside each pending list back to it.
    async fn requeue(
        &self,
        kind: &str,
        event_id: &str,
        since: i64,
        now: i64,
    ) -> Result<u64, StoreError> {
        let mut moved = 0;
        let mut conn = self.conn.clone();
        for pending in self.pending_lists().await? {
            let n: u64 = redis::Script::new(REQUEUE)
                .key(self.keys.beside(&pending, kind))
                .key(&pending)
                .key(self.due_of(&pending)?)
                .arg(now)
                .arg(event_id)
                .arg(since)
                .arg(if kind == "parked" { "front" } else { "back" })
                .invoke_async(&mut conn)
                .await?;
            moved += n;
        }
        Ok(moved)
    }
}

/// The endpoint a pending, parked or log list is for (its name's last part).
fn endpoint_of(list: &str) -> &str {
    list.rsplit(':').next().unwrap_or(list)
}

/// A record as the lists keep it.
pub(crate) fn encode(delivery: &Delivery) -> String {
    serde_json::to_string(delivery).expect("a delivery serializes")
}

fn decode(record: &str) -> Result<Delivery, StoreError> {
    serde_json::from_str(record).map_err(|e| StoreError::Corrupt(format!("outbox record: {e}")))
}

#[async_trait]
impl OutboxBackend for RedisOutbox {
    async fn claim(
        &self,
        endpoint: &str,
        now: i64,
        limit: usize,
        claim_secs: i64,
    ) -> Result<Vec<Claimed>, StoreError> {
        let mut claimed = Vec::new();
        for list in self.due_lists(endpoint, now, limit).await? {
            if let Some(one) = self.claim_list(&list, now, now + claim_secs).await? {
                claimed.push(one);
            }
        }
        Ok(claimed)
    }

    async fn settle(&self, claimed: &Claimed, outcome: &Outcome) -> Result<(), StoreError> {
        let Handle::List(list) = &claimed.handle else {
            return Err(StoreError::Corrupt("a SQL claim settled in Redis".into()));
        };
        let (kind, time, error) = match outcome {
            Outcome::Delivered { at } => ("delivered", *at, ""),
            Outcome::Failed {
                next_attempt_at,
                error,
            } => ("failed", *next_attempt_at, error.as_str()),
            Outcome::Parked { error } => ("parked", 0, error.as_str()),
        };
        self.settle_head(list, &claimed.delivery.event_id, kind, time, error)
            .await?;
        Ok(())
    }

    async fn list(&self, filter: &Filter) -> Result<Vec<Delivery>, StoreError> {
        let mut conn = self.conn.clone();
        let mut found = Vec::new();
        for pending in self.pending_lists().await? {
            let lists = [
                self.keys.beside(&pending, "parked"),
                self.keys.beside(&pending, "log"),
                pending,
            ];
            for list in lists {
                let records: Vec<String> = redis::cmd("LRANGE")
                    .arg(&list)
                    .arg(0)
                    .arg(-1)
                    .query_async(&mut conn)
                    .await?;
                for record in records {
                    let delivery = decode(&record)?;
                    if filter.status.is_none_or(|s| s == delivery.status) {
                        found.push(delivery);
                    }
                }
            }
        }
        found.sort_by_key(|d| std::cmp::Reverse(d.created_at));
        found.truncate(filter.limit);
        Ok(found)
    }

    async fn retry_parked(&self, event_id: Option<&str>, now: i64) -> Result<u64, StoreError> {
        self.requeue("parked", event_id.unwrap_or(""), 0, now).await
    }

    async fn replay(&self, since: i64, now: i64) -> Result<u64, StoreError> {
        self.requeue("log", "", since.max(1), now).await
    }

    async fn depth(&self, endpoints: &[&str], now: i64) -> Result<Depth, StoreError> {
        let mut depth = Depth::default();
        for bucket in Bucket::all() {
            self.add_depth(bucket, endpoints, now, &mut depth).await?;
        }
        Ok(depth)
    }

    async fn prune_delivered(&self, _before: i64) -> Result<u64, StoreError> {
        Ok(0) // each log keeps its last LOG_KEPT records (LTRIM at delivery)
    }

    async fn forget(&self, principal: &crate::identity::Principal) -> Result<u64, StoreError> {
        self.forget_principal(principal).await
    }

    async fn endpoints_pending(&self) -> Result<Vec<String>, StoreError> {
        let per_bucket = try_join_all(Bucket::all().map(|bucket| {
            let mut conn = self.conn.clone();
            let index = self.keys.outbox_endpoints(bucket);
            async move {
                redis::cmd("SMEMBERS")
                    .arg(index)
                    .query_async::<Vec<String>>(&mut conn)
                    .await
            }
        }))
        .await?;
        let mut endpoints: Vec<String> = per_bucket.into_iter().flatten().collect();
        endpoints.sort();
        endpoints.dedup();
        Ok(endpoints)
    }

    async fn cap_undelivered(
        &self,
        endpoint: &str,
        keep: u64,
        _now: i64,
    ) -> Result<u64, StoreError> {
        self.cap(endpoint, keep).await
    }
}

impl RedisOutbox {
    /// What waits in `bucket` for `endpoints`, added to `depth`: the lists with work (bounded:
    /// a healthy outbox is nearly empty), their lengths and oldest heads in one round trip.
    async fn add_depth(
        &self,
        bucket: Bucket,
        endpoints: &[&str],
        now: i64,
        depth: &mut Depth,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let mut lists: Vec<String> = Vec::new();
        for endpoint in endpoints {
            let more: Vec<String> = redis::cmd("ZRANGE")
                .arg(self.keys.outbox_due(bucket, endpoint))
                .arg(0)
                .arg(9_999)
                .query_async(&mut conn)
                .await?;
            lists.extend(more);
        }
        if lists.is_empty() {
            return Ok(());
        }
        let mut page = redis::pipe();
        for list in &lists {
            page.cmd("LLEN").arg(list).cmd("LINDEX").arg(list).arg(0);
        }
        let answers: Vec<redis::Value> = page.query_async(&mut conn).await?;
        for pair in answers.chunks(2) {
            if let [redis::Value::Int(len), head] = pair {
                depth.pending += len;
                if let Ok(head) = redis::from_redis_value::<String>(head.clone())
                    && let Ok(d) = decode(&head)
                {
                    depth.oldest_pending_age = depth.oldest_pending_age.max(now - d.created_at);
                }
            }
        }
        Ok(())
    }

    /// Runs [`SETTLE`] on the head of the pending `list`; whether it was still `event_id`.
    async fn settle_head(
        &self,
        list: &str,
        event_id: &str,
        kind: &str,
        time: i64,
        error: &str,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let settled: i64 = redis::Script::new(SETTLE)
            .key(list)
            .key(self.due_of(list)?)
            .key(self.keys.beside(list, "log"))
            .key(self.keys.beside(list, "parked"))
            .arg(event_id)
            .arg(kind)
            .arg(time)
            .arg(error)
            .arg(LOG_KEPT)
            .invoke_async(&mut conn)
            .await?;
        Ok(settled == 1)
    }
}
