//! Grant rows in Redis: one hash per grant, `grant:{owner}` for the one grant at a provider
//! without accounts (and every grant from before accounts were kept), `grant:{owner}:TAG` for
//! each further account, where `owner` is a non-reversible tag of (principal, provider): all
//! of a principal's grants at a provider share a hash slot with their index,
//! `grant-accounts:{owner}`, which lists the account keys. Version checks run inside Lua
//! scripts, so compare-and-set is atomic.

use std::collections::HashMap;

use crate::store::{RedisConn, Replication};
use async_trait::async_trait;

use super::redis_scripts::{
    ARG_RECORDS, COMPARE_AND_SET, DELETE_IF_VERSION, RESCHEDULE, TOUCH, UPSERT, WRITE_ROW,
};
use super::{GrantBackend, GrantKey, GrantRow, KeyUsage, Reschedule};
use crate::identity::Principal;
use crate::ids::{AccountId, ProviderId};
use crate::outbox::Delivery;
use crate::outbox::redis as outbox_redis;
use crate::store::StoreError;

pub(crate) struct RedisGrants {
    conn: RedisConn,
    prefix: String,
    /// How many replicas must hold a write a person is told about.
    replication: Replication,
}

impl RedisGrants {
    /// Every grant hash, read with SCAN in pages (never KEYS on a live server).
    async fn scan_grants(
        &self,
        mut keep: impl FnMut(&str, &HashMap<String, String>) -> bool,
        limit: usize,
    ) -> Result<Vec<HashMap<String, String>>, StoreError> {
        let mut conn = self.conn.clone();
        let pattern = format!("{}grant:*", self.prefix);
        let mut cursor: u64 = 0;
        let mut found = Vec::new();
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(500)
                .query_async(&mut conn)
                .await?;
            // One round trip per page: the page's hashes are read in a pipeline.
            let hashes = self.read_hashes(&keys).await?;
            for (key, hash) in keys.iter().zip(hashes) {
                if !hash.is_empty() && keep(key, &hash) {
                    found.push(hash);
                    if found.len() >= limit {
                        return Ok(found);
                    }
                }
            }
            if next == 0 {
                return Ok(found);
            }
            cursor = next;
        }
    }

    pub(crate) fn new(conn: RedisConn, prefix: &str, replication: Replication) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
            replication,
        }
    }

    fn key(&self, key: &GrantKey) -> String {
        if key.account.is_none() {
            format!("{}grant:{{{}}}", self.prefix, key.owner_tag())
        } else {
            format!("{}grant:{{{}}}:{}", self.prefix, key.owner_tag(), key.tag())
        }
    }

    /// The keys of a principal's grants at a provider that have an account.
    fn accounts_key(&self, key: &GrantKey) -> String {
        format!("{}grant-accounts:{{{}}}", self.prefix, key.owner_tag())
    }

    /// The keep-alive index: grants by when the keep-alive next looks at them.
    fn keepalive_key(&self) -> String {
        format!("{}keepalive", self.prefix)
    }

    /// A script over the grant `key` (`KEYS[1]`), the keep-alive index (`KEYS[2]`), the
    /// account index (`KEYS[3]`) and, for each of `events`, its outbox list and its
    /// endpoint's due set (`KEYS[4…]`); `body` ends by adding the events (ARGV from
    /// `records_from`) and returning 1, unless it returned earlier.
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
            outbox_redis::append_lua(4, records_from)
        );
        let script = script.insert(redis::Script::new(&source));
        let mut invocation = script.key(self.key(key));
        invocation
            .key(self.keepalive_key())
            .key(self.accounts_key(key));
        for event in events {
            for each in outbox_redis::delivery_keys(&self.prefix, event) {
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

    /// Files grants written before the keep-alive index (once per store: a marker key says
    /// it was done), so the keep-alive looks at each of them soon.
    pub(crate) async fn index_older_grants(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let marker = format!("{}keepalive-indexed", self.prefix);
        let done: bool = redis::cmd("EXISTS")
            .arg(&marker)
            .query_async(&mut conn)
            .await?;
        if done {
            return Ok(());
        }
        let mut keys = Vec::new();
        self.scan_grants(
            |key, h| {
                if !h.contains_key("keepalive_at") {
                    keys.push(key.to_owned());
                }
                false
            },
            usize::MAX,
        )
        .await?;
        for page in keys.chunks(500) {
            let mut pipe = redis::pipe();
            for key in page {
                pipe.cmd("ZADD")
                    .arg(self.keepalive_key())
                    .arg("NX")
                    .arg(1)
                    .arg(key)
                    .ignore();
            }
            pipe.query_async::<()>(&mut conn).await?;
        }
        let _: () = redis::cmd("SET")
            .arg(&marker)
            .arg(1)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// Reads the hashes of `keys` in one round trip, in order (empty where one is gone).
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
            .arg(self.accounts_key(&sole))
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

    async fn touch(&self, key: &GrantKey, at: i64) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::Script::new(TOUCH)
            .key(self.key(key))
            .arg(at)
            .invoke_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    async fn reschedule(&self, moves: &[Reschedule]) -> Result<(), StoreError> {
        if moves.is_empty() {
            return Ok(());
        }
        // One round trip for the lot.
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        for m in moves {
            pipe.cmd("EVAL")
                .arg(RESCHEDULE)
                .arg(2)
                .arg(self.key(&m.key))
                .arg(self.keepalive_key())
                .arg(m.version)
                .arg(m.at)
                .ignore();
        }
        pipe.query_async::<()>(&mut conn).await?;
        Ok(())
    }

    async fn due_for_keepalive(
        &self,
        now: i64,
        limit: usize,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
        let mut conn = self.conn.clone();
        let keys: Vec<String> = redis::cmd("ZRANGEBYSCORE")
            .arg(self.keepalive_key())
            .arg(1)
            .arg(now)
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .query_async(&mut conn)
            .await?;
        let mut due = Vec::with_capacity(keys.len());
        for (name, hash) in keys.iter().zip(self.read_hashes(&keys).await?) {
            if hash.is_empty() {
                // Deleted without its index entry (by a version before the index).
                let _: i64 = redis::cmd("ZREM")
                    .arg(self.keepalive_key())
                    .arg(name)
                    .query_async(&mut conn)
                    .await?;
                continue;
            }
            due.push((key_from_hash(&hash)?, row_from_hash(hash)?));
        }
        Ok(due)
    }

    async fn count_by_state(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        let mut counts = std::collections::BTreeMap::<(String, String), i64>::new();
        let mut conn = self.conn.clone();
        let pattern = format!("{}grant:*", self.prefix);
        let mut cursor: u64 = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await?;
            // Two fields of each, a page per round trip.
            let mut page = redis::pipe();
            for key in &keys {
                page.cmd("HMGET").arg(key).arg("provider").arg("state");
            }
            let fields: Vec<(Option<String>, Option<String>)> = if keys.is_empty() {
                Vec::new()
            } else {
                page.query_async(&mut conn).await?
            };
            for (provider, state) in fields {
                if let Some(provider) = provider {
                    let state = state.unwrap_or_else(|| "active".into());
                    *counts.entry((provider, state)).or_default() += 1;
                }
            }
            if next == 0 {
                return Ok(counts.into_iter().map(|((p, s), n)| (p, s, n)).collect());
            }
            cursor = next;
        }
    }

    async fn key_usage(&self) -> Result<KeyUsage, StoreError> {
        let mut counts = std::collections::BTreeMap::<String, i64>::new();
        self.scan_grants(
            |_, h| {
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

    async fn sealed_under_other_keys(
        &self,
        key_id: &str,
        limit: usize,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError> {
        let hashes = self
            .scan_grants(
                |_, h| h.get("key_id").map(String::as_str) != Some(key_id),
                limit,
            )
            .await?;
        hashes
            .into_iter()
            .map(|h| Ok((key_from_hash(&h)?, row_from_hash(h)?)))
            .collect()
    }
}
