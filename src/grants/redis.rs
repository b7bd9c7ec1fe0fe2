//! Grant rows in Redis: one hash per grant, keyed by a non-reversible tag of (principal,
//! provider). Version checks run inside Lua scripts, so compare-and-set is atomic.

use std::collections::HashMap;

use async_trait::async_trait;
use redis::aio::ConnectionManager;

use super::{GrantBackend, GrantKey, GrantRow, KeyUsage};
use crate::store::StoreError;

pub struct RedisGrants {
    conn: ConnectionManager,
    prefix: String,
}

/// Writes the row, with a version above any earlier one's. The principal and provider are
/// kept in the hash too (the key is only a tag), for key rotation.
const UPSERT: &str = r"
local old = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local version = math.max(old + 1, tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 'tokens_sealed', ARGV[1], 'access_expires_at', ARGV[2],
  'scopes', ARGV[3], 'version', version, 'created_at', ARGV[5], 'updated_at', ARGV[6],
  'key_id', ARGV[7], 'principal_iss', ARGV[8], 'principal_sub', ARGV[9], 'provider', ARGV[10])
return version
";

/// Replaces the row only while it has the expected version (`ARGV[11]`).
const COMPARE_AND_SET: &str = r"
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[11] then return 0 end
redis.call('HSET', KEYS[1], 'tokens_sealed', ARGV[1], 'access_expires_at', ARGV[2],
  'scopes', ARGV[3], 'version', ARGV[4], 'created_at', ARGV[5], 'updated_at', ARGV[6],
  'key_id', ARGV[7], 'principal_iss', ARGV[8], 'principal_sub', ARGV[9], 'provider', ARGV[10])
return 1
";

/// Deletes the row only while it has the expected version.
const DELETE_IF_VERSION: &str = r"
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
";

impl RedisGrants {
    /// Every grant hash, read with SCAN in pages (never KEYS on a live server).
    async fn scan_grants(
        &self,
        mut keep: impl FnMut(&HashMap<String, String>) -> bool,
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
            let mut page = redis::pipe();
            for key in &keys {
                page.cmd("HGETALL").arg(key);
            }
            let hashes: Vec<HashMap<String, String>> = if keys.is_empty() {
                Vec::new()
            } else {
                page.query_async(&mut conn).await?
            };
            for hash in hashes {
                if !hash.is_empty() && keep(&hash) {
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

    pub fn new(conn: ConnectionManager, prefix: &str) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
        }
    }

    fn key(&self, key: &GrantKey) -> String {
        format!("{}grant:{{{}}}", self.prefix, key.tag())
    }

    async fn write(
        &self,
        script: &str,
        key: &GrantKey,
        row: &GrantRow,
        extra: Option<i64>,
    ) -> Result<i64, StoreError> {
        let mut conn = self.conn.clone();
        let script = redis::Script::new(script);
        let mut invocation = script.key(self.key(key));
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
            .arg(&key.provider);
        if let Some(expected) = extra {
            invocation.arg(expected);
        }
        Ok(invocation.invoke_async(&mut conn).await?)
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
    })
}

fn key_from_hash(h: &HashMap<String, String>) -> Result<GrantKey, StoreError> {
    let field = |name: &str| {
        h.get(name)
            .cloned()
            .ok_or_else(|| StoreError::Corrupt(format!("grant without `{name}`")))
    };
    Ok(GrantKey {
        principal: crate::identity::Principal {
            issuer: field("principal_iss")?,
            subject: field("principal_sub")?,
        },
        provider: field("provider")?,
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

    async fn upsert(&self, key: &GrantKey, row: &GrantRow) -> Result<(), StoreError> {
        self.write(UPSERT, key, row, None).await.map(|_| ())
    }

    async fn compare_and_set(
        &self,
        key: &GrantKey,
        expected_version: i64,
        row: &GrantRow,
    ) -> Result<bool, StoreError> {
        Ok(self
            .write(COMPARE_AND_SET, key, row, Some(expected_version))
            .await?
            == 1)
    }

    async fn delete(&self, key: &GrantKey) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let removed: i64 = redis::cmd("DEL")
            .arg(self.key(key))
            .query_async(&mut conn)
            .await?;
        Ok(removed == 1)
    }

    async fn delete_if_version(&self, key: &GrantKey, version: i64) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let removed: i64 = redis::Script::new(DELETE_IF_VERSION)
            .key(self.key(key))
            .arg(version)
            .invoke_async(&mut conn)
            .await?;
        Ok(removed == 1)
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
