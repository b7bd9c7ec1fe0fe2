//! Grant rows in Redis, in the buckets of [`crate::store::redis::layout`]: one hash per grant
//! (`grant:{T}:OWNER`, `:TAG` for each further account), where `OWNER` is a non-reversible tag
//! of (principal, provider) and `T` its bucket's hash tag, so a person's grants at a provider,
//! their account index, the bucket's grant index and keep-alive schedule, and the outbox lists
//! a write appends to are all in one slot. Version checks and the writes they guard run inside
//! Lua scripts, so compare-and-set is atomic, on one server and on a cluster alike.

use std::collections::HashMap;

use async_trait::async_trait;
use futures::future::try_join_all;

use super::redis_scripts::{
    ARG_RECORDS, COMPARE_AND_SET, DELETE_IF_VERSION, RESCHEDULE, TOUCH, UPSERT, WRITE_ROW,
};
use super::{GrantBackend, GrantKey, GrantRow, KeyUsage, Reschedule};
use crate::identity::Principal;
use crate::ids::{AccountId, ProviderId};
use crate::outbox::Delivery;
use crate::outbox::redis as outbox_redis;
use crate::store::redis::layout::{Bucket, Keys};
use crate::store::{RedisConn, Replication, StoreError};

pub(crate) struct RedisGrants {
    conn: RedisConn,
    keys: Keys,
    /// How many replicas must hold a write a person is told about.
    replication: Replication,
}

impl RedisGrants {
    pub(crate) fn new(conn: RedisConn, prefix: &str, replication: Replication) -> Self {
        Self {
            conn,
            keys: Keys::new(prefix),
            replication,
        }
    }

    fn key(&self, key: &GrantKey) -> String {
        let owner = key.owner_tag();
        match key.account {
            None => self.keys.grant(&owner, None),
            Some(_) => self.keys.grant(&owner, Some(&key.tag())),
        }
    }

    fn bucket(key: &GrantKey) -> Bucket {
        Bucket::of(&key.owner_tag())
    }

    /// Every grant hash, a bucket at a time (each bucket's index, then its hashes in one
    /// round trip), kept where `keep` says, at most `limit`.
    async fn scan_grants(
        &self,
        mut keep: impl FnMut(&HashMap<String, String>) -> bool,
        limit: usize,
    ) -> Result<Vec<HashMap<String, String>>, StoreError> {
        let mut found = Vec::new();
        for bucket in Bucket::all() {
            for hash in self.bucket_hashes(bucket).await? {
                if keep(&hash) {
                    found.push(hash);
                    if found.len() >= limit {
                        return Ok(found);
                    }
                }
            }
        }
        Ok(found)
    }

    /// The hashes of every grant in `bucket`.
    async fn bucket_hashes(
        &self,
        bucket: Bucket,
    ) -> Result<Vec<HashMap<String, String>>, StoreError> {
        let mut conn = self.conn.clone();
        let names: Vec<String> = redis::cmd("SMEMBERS")
            .arg(self.keys.grants(bucket))
            .query_async(&mut conn)
            .await?;
        let hashes = self.read_hashes(&names).await?;
        // Empty: deleted since (the deletion's own script tidies the index).
        Ok(hashes.into_iter().filter(|h| !h.is_empty()).collect())
    }

    /// A script over the grant `key` (`KEYS[1]`), its bucket's keep-alive schedule
    /// (`KEYS[2]`), the owner's account index (`KEYS[3]`), the bucket's grant index
    /// (`KEYS[4]`), outbox lists (`KEYS[5]`) and endpoints (`KEYS[6]`) and, for each of
    /// `events`, its outbox list and its endpoint's due set (`KEYS[7…]`); `body` ends by adding
    /// the events (ARGV from `records_from`) and returning 1, unless it returned earlier.
    fn with_events<'a>(
        &self,
        body: &str,
        key: &GrantKey,
        events: &[Delivery],
        records_from: usize,
        script: &'a mut Option<redis::Script>,
    ) -> redis::ScriptInvocation<'a> {
        let source = format!(
            "{WRITE_ROW}\n{body}\n{}\nreturn 1",
            outbox_redis::append_lua(5, 6, 7, records_from)
        );
        let script = script.insert(redis::Script::new(&source));
        let bucket = Self::bucket(key);
        let mut invocation = script.key(self.key(key));
        invocation
            .key(self.keys.keepalive(bucket))
            .key(self.keys.grant_accounts(&key.owner_tag()))
            .key(self.keys.grants(bucket))
            .key(self.keys.outbox_lists(bucket))
            .key(self.keys.outbox_endpoints(bucket));
        for event in events {
            for each in outbox_redis::delivery_keys(&self.keys, bucket, event) {
                invocation.key(each);
            }
        }
        invocation
    }

    async fn write(
        &self,
        script: &str,
        key: &GrantKey,
        row: &GrantRow,
        (expected, events): (Option<i64>, &[Delivery]),
    ) -> Result<i64, StoreError> {
        let mut conn = self.conn.clone();
        let mut holder = None;
        let mut invocation = self.with_events(script, key, events, ARG_RECORDS, &mut holder);
        invocation
            .arg(&row.tokens_sealed)
            .arg(row.access_expires_at)
            .arg(&row.scopes)
            .arg(row.version)
            .arg(row.created_at)
            .arg(row.updated_at)
            .arg(&row.key_id)
            .arg(&key.principal.issuer)
            .arg(&key.principal.subject)
            .arg(key.provider.as_str())
            .arg(&row.connection_id)
            .arg(&row.state)
            .arg(&row.health)
            .arg(row.keepalive_at)
            // A compare-and-set leaves `used_at` to `touch`.
            .arg(if expected.is_some() {
                String::new()
            } else {
                row.used_at.to_string()
            })
            .arg(expected.map_or(String::new(), |v| v.to_string()))
            .arg(AccountId::text(key.account.as_ref()));
        for event in events {
            invocation.arg(outbox_redis::encode(event));
        }
        self.replication.write(&mut conn, &invocation).await
    }

    /// Reads the hashes of `keys`, all of one bucket, in one round trip (a pipeline keeps to
    /// one slot on a cluster), in order (empty where one is gone).
    async fn read_hashes(
        &self,
        keys: &[String],
    ) -> Result<Vec<HashMap<String, String>>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn.clone();
        let mut page = redis::pipe();
        for key in keys {
            page.cmd("HGETALL").arg(key);
        }
        Ok(page.query_async(&mut conn).await?)
    }
}

fn row_from_hash(mut h: HashMap<String, String>) -> Result<GrantRow, StoreError> {
    let mut take = |name: &str| {
        h.remove(name)
            .ok_or_else(|| StoreError::Corrupt(format!("grant without `{name}`")))
    };
    let number = |text: String| {
        text.parse::<i64>()
            .map_err(|_| StoreError::Corrupt("grant field is not a number".into()))
    };
    Ok(GrantRow {
        tokens_sealed: take("tokens_sealed")?,
        access_expires_at: number(take("access_expires_at")?)?,
        scopes: take("scopes")?,
        version: number(take("version")?)?,
        created_at: number(take("created_at")?)?,
        updated_at: number(take("updated_at")?)?,
        key_id: h.remove("key_id").unwrap_or_default(),
        // Rows from before connection health: an active grant, looked at soon.
        connection_id: h.remove("connection_id").unwrap_or_default(),
        state: h.remove("state").unwrap_or_else(|| "active".into()),
        health: h.remove("health").unwrap_or_else(|| "{}".into()),
        keepalive_at: h.remove("keepalive_at").map_or(Ok(1), number)?,
        used_at: h.remove("used_at").map_or(Ok(0), number)?,
        used_by: h.remove("used_by").unwrap_or_default(),
    })
}

fn key_from_hash(h: &HashMap<String, String>) -> Result<GrantKey, StoreError> {
    let field = |name: &str| {
        h.get(name)
            .cloned()
            .ok_or_else(|| StoreError::Corrupt(format!("grant without `{name}`")))
    };
    Ok(GrantKey {
        principal: Principal {
            issuer: field("principal_iss")?,
            subject: field("principal_sub")?,
        },
        provider: field("provider")?
            .parse()
            .map_err(|e| StoreError::Corrupt(format!("grant hash: {e}")))?,
        account: h.get("account").cloned().and_then(AccountId::given),
    })
}

#[async_trait]
impl GrantBackend for RedisGrants {
    fn system(&self) -> &'static str {
        "redis"
    }

    async fn get(&self, key: &GrantKey) -> Result<Option<GrantRow>, StoreError> {
        let mut conn = self.conn.clone();
        let hash: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.key(key))
            .query_async(&mut conn)
            .await?;
        if hash.is_empty() {
            return Ok(None);
        }
        row_from_hash(hash).map(Some)
    }

    async fn list(
        &self,
        principal: &Principal,
        provider: &ProviderId,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
        let sole = GrantKey::sole(principal, provider);
        let mut conn = self.conn.clone();
        let mut keys: Vec<String> = redis::cmd("SMEMBERS")
            .arg(self.keys.grant_accounts(&sole.owner_tag()))
            .query_async(&mut conn)
            .await?;
        keys.push(self.key(&sole));
        let mut found = Vec::new();
        for hash in self.read_hashes(&keys).await? {
            // Empty: gone since (the index is tidied by the deletion's own script).
            if !hash.is_empty() {
                found.push((key_from_hash(&hash)?, row_from_hash(hash)?));
            }
        }
        Ok(found)
    }

    async fn upsert(
        &self,
        key: &GrantKey,
        row: &GrantRow,
        events: &[Delivery],
    ) -> Result<(), StoreError> {
        self.write(UPSERT, key, row, (None, events))
            .await
            .map(|_| ())
    }

    async fn compare_and_set(
        &self,
        key: &GrantKey,
        expected_version: i64,
        row: &GrantRow,
        events: &[Delivery],
    ) -> Result<bool, StoreError> {
        Ok(self
            .write(COMPARE_AND_SET, key, row, (Some(expected_version), events))
            .await?
            == 1)
    }

    async fn delete_if_version(
        &self,
        key: &GrantKey,
        version: i64,
        events: &[Delivery],
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let mut holder = None;
        // ARGV: the version, then the records.
        let mut invocation = self.with_events(DELETE_IF_VERSION, key, events, 2, &mut holder);
        invocation.arg(version);
        for event in events {
            invocation.arg(outbox_redis::encode(event));
        }
        let removed = self.replication.write(&mut conn, &invocation).await?;
        Ok(removed == 1)
    }

    async fn touch(&self, key: &GrantKey, at: i64, by: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::Script::new(TOUCH)
            .key(self.key(key))
            .arg(at)
            .arg(by)
            .invoke_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    async fn reschedule(&self, moves: &[Reschedule]) -> Result<(), StoreError> {
        // One round trip per bucket (a pipeline keeps to one slot on a cluster).
        let mut by_bucket: HashMap<Bucket, Vec<&Reschedule>> = HashMap::new();
        for m in moves {
            by_bucket.entry(Self::bucket(&m.key)).or_default().push(m);
        }
        try_join_all(by_bucket.into_iter().map(|(bucket, moves)| {
            let mut conn = self.conn.clone();
            let mut pipe = redis::pipe();
            for m in moves {
                pipe.cmd("EVAL")
                    .arg(RESCHEDULE)
                    .arg(2)
                    .arg(self.key(&m.key))
                    .arg(self.keys.keepalive(bucket))
                    .arg(m.version)
                    .arg(m.at)
                    .ignore();
            }
            async move { pipe.query_async::<()>(&mut conn).await }
        }))
        .await?;
        Ok(())
    }

    async fn due_for_keepalive(
        &self,
        now: i64,
        limit: usize,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
        // Each bucket's most overdue, then the most overdue of them all.
        let per_bucket =
            try_join_all(Bucket::all().map(|bucket| self.due_in(bucket, now, limit))).await?;
        let mut due: Vec<(i64, String)> = per_bucket.into_iter().flatten().collect();
        due.sort();
        due.truncate(limit);
        // Their hashes, a round trip per bucket.
        let mut by_bucket: HashMap<Bucket, Vec<String>> = HashMap::new();
        for (_, name) in due {
            if let Some(bucket) = Bucket::in_key(&name) {
                by_bucket.entry(bucket).or_default().push(name);
            }
        }
        let read = try_join_all(by_bucket.values().map(|names| self.read_hashes(names))).await?;
        let mut rows = Vec::new();
        for (names, hashes) in by_bucket.values().zip(read) {
            for (name, hash) in names.iter().zip(hashes) {
                if hash.is_empty() {
                    self.unschedule(name).await?;
                } else {
                    rows.push((key_from_hash(&hash)?, row_from_hash(hash)?));
                }
            }
        }
        rows.sort_by_key(|(_, row)| row.keepalive_at);
        Ok(rows)
    }

    async fn count_by_state(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        let mut counts = std::collections::BTreeMap::<(String, String), i64>::new();
        for bucket in Bucket::all() {
            for hash in self.bucket_hashes(bucket).await? {
                if let Some(provider) = hash.get("provider") {
                    let state = hash
                        .get("state")
                        .cloned()
                        .unwrap_or_else(|| "active".into());
                    *counts.entry((provider.clone(), state)).or_default() += 1;
                }
            }
        }
        Ok(counts.into_iter().map(|((p, s), n)| (p, s, n)).collect())
    }

    async fn key_usage(&self) -> Result<KeyUsage, StoreError> {
        let mut counts = std::collections::BTreeMap::<String, i64>::new();
        self.scan_grants(
            |h| {
                *counts
                    .entry(h.get("key_id").cloned().unwrap_or_default())
                    .or_default() += 1;
                false
            },
            usize::MAX,
        )
        .await?;
        Ok(counts.into_iter().collect())
    }

    async fn all(
        &self,
        principal: Option<&Principal>,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
        let theirs = |h: &HashMap<String, String>| {
            principal.is_none_or(|p| {
                h.get("principal_iss") == Some(&p.issuer)
                    && h.get("principal_sub") == Some(&p.subject)
            })
        };
        let hashes = self.scan_grants(theirs, usize::MAX).await?;
        hashes
            .into_iter()
            .map(|h| Ok((key_from_hash(&h)?, row_from_hash(h)?)))
            .collect()
    }

    async fn sealed_under_other_keys(
        &self,
        key_id: &str,
        limit: usize,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
        let hashes = self
            .scan_grants(
                |h| h.get("key_id").map(String::as_str) != Some(key_id),
                limit,
            )
            .await?;
        hashes
            .into_iter()
            .map(|h| Ok((key_from_hash(&h)?, row_from_hash(h)?)))
            .collect()
    }
}

impl RedisGrants {
    /// Up to `limit` grants of `bucket` due by `now`: (when, key name).
    async fn due_in(
        &self,
        bucket: Bucket,
        now: i64,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let mut conn = self.conn.clone();
        let due: Vec<(String, i64)> = redis::cmd("ZRANGEBYSCORE")
            .arg(self.keys.keepalive(bucket))
            .arg(1)
            .arg(now)
            .arg("WITHSCORES")
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .query_async(&mut conn)
            .await?;
        Ok(due.into_iter().map(|(name, at)| (at, name)).collect())
    }

    /// Takes a grant gone without its schedule entry off the schedule.
    async fn unschedule(&self, name: &str) -> Result<(), StoreError> {
        let Some(bucket) = Bucket::in_key(name) else {
            return Ok(());
        };
        let mut conn = self.conn.clone();
        let _: i64 = redis::cmd("ZREM")
            .arg(self.keys.keepalive(bucket))
            .arg(name)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }
}
