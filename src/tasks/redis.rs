//! Tasks in Redis: one hash per task, keyed by the hash of its id, with two sorted sets by
//! expiry: the owner's (what erasing a person removes) and everyone's (what the sweep
//! removes). A task's hash also expires on its own a while after its time to live, should no
//! replica sweep. Each command touches one key, so the layout
//! works on Redis Cluster too; a task's writes are scripts on its one key, acknowledged by the
//! replicas asked for.

use std::collections::HashMap;

use async_trait::async_trait;

use super::{EXPIRED_RETENTION_MS, StoredTask, TaskBackend, TaskStatus};
use crate::identity::Principal;
use crate::store::{RedisConn, Replication, StoreError};

/// Writes a new task unless its key is taken; 1 if it did.
const INSERT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'principal_iss', ARGV[1], 'principal_sub', ARGV[2],
  'status', ARGV[3], 'version', 1, 'created_at', ARGV[4], 'updated_at', ARGV[5],
  'expires_at', ARGV[6], 'sealed', ARGV[7])
redis.call('PEXPIREAT', KEYS[1], ARGV[8])
return 1
";

/// Rewrites a task if it is still at version `ARGV[1]`; 1 if it did.
const REPLACE: &str = r"
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'version', tonumber(ARGV[1]) + 1, 'status', ARGV[2],
  'updated_at', ARGV[3], 'expires_at', ARGV[4], 'sealed', ARGV[5])
redis.call('PEXPIREAT', KEYS[1], ARGV[6])
return 1
";

pub(crate) struct RedisTasks {
    conn: RedisConn,
    prefix: String,
    replication: Replication,
}

impl RedisTasks {
    pub(crate) fn new(conn: RedisConn, prefix: &str, replication: Replication) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
            replication,
        }
    }

    fn task_key(&self, id_hash: &str) -> String {
        format!("{}task:{{{id_hash}}}", self.prefix)
    }

    /// The owner's tasks, scored by expiry.
    fn owner_key(&self, principal: &Principal) -> String {
        format!("{}tasks-of:{{{}}}", self.prefix, principal.tag())
    }

    /// Every task, scored by expiry.
    fn expiry_key(&self) -> String {
        format!("{}tasks-by-expiry", self.prefix)
    }

    async fn read(&self, id_hash: &str) -> Result<Option<StoredTask>, StoreError> {
        let mut conn = self.conn.clone();
        let hash: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.task_key(id_hash))
            .query_async(&mut conn)
            .await?;
        if hash.is_empty() {
            return Ok(None);
        }
        task_from_hash(id_hash, hash).map(Some)
    }

    /// Files `task` under its owner and in the sweep's index, at its expiry.
    async fn index(&self, task: &StoredTask) -> Result<(), StoreError> {
        let mut conns = (self.conn.clone(), self.conn.clone());
        let mut by_owner = redis::pipe();
        by_owner
            .zadd(
                self.owner_key(&task.principal),
                &task.id_hash,
                task.expires_at_ms,
            )
            .pexpire_at(
                self.owner_key(&task.principal),
                task.expires_at_ms + EXPIRED_RETENTION_MS,
            );
        let mut by_expiry = redis::pipe();
        by_expiry.zadd(self.expiry_key(), &task.id_hash, task.expires_at_ms);
        tokio::try_join!(
            by_owner.query_async::<()>(&mut conns.0),
            by_expiry.query_async::<()>(&mut conns.1),
        )?;
        Ok(())
    }

    /// Removes one task and its index entries; tells whether its hash was still there.
    async fn remove(&self, id_hash: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let key = self.task_key(id_hash);
        let owner: (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(&key)
            .arg("principal_iss")
            .arg("principal_sub")
            .query_async(&mut conn)
            .await?;
        if let (Some(issuer), Some(subject)) = owner {
            let principal = Principal { issuer, subject };
            redis::cmd("ZREM")
                .arg(self.owner_key(&principal))
                .arg(id_hash)
                .query_async::<()>(&mut conn)
                .await?;
        }
        let removed: u64 = redis::cmd("DEL").arg(&key).query_async(&mut conn).await?;
        redis::cmd("ZREM")
            .arg(self.expiry_key())
            .arg(id_hash)
            .query_async::<()>(&mut conn)
            .await?;
        Ok(removed == 1)
    }
}

fn task_from_hash(id_hash: &str, mut h: HashMap<String, String>) -> Result<StoredTask, StoreError> {
    let mut take = |name: &str| {
        h.remove(name)
            .ok_or_else(|| StoreError::Corrupt(format!("task without `{name}`")))
    };
    let number = |text: String| {
        text.parse::<i64>()
            .map_err(|_| StoreError::Corrupt("task time or version is not a number".into()))
    };
    Ok(StoredTask {
        id_hash: id_hash.to_owned(),
        principal: Principal {
            issuer: take("principal_iss")?,
            subject: take("principal_sub")?,
        },
        status: TaskStatus::parse(&take("status")?)?,
        version: number(take("version")?)?,
        created_at_ms: number(take("created_at")?)?,
        updated_at_ms: number(take("updated_at")?)?,
        expires_at_ms: number(take("expires_at")?)?,
        sealed: take("sealed")?,
    })
}

#[async_trait]
impl TaskBackend for RedisTasks {
    async fn insert(&self, task: &StoredTask) -> Result<(), StoreError> {
        let _span = crate::telemetry::store_span("tasks insert", "redis", "insert", "tasks");
        let script = redis::Script::new(INSERT);
        let mut invocation = script.key(self.task_key(&task.id_hash));
        invocation
            .arg(&task.principal.issuer)
            .arg(&task.principal.subject)
            .arg(task.status.as_str())
            .arg(task.created_at_ms)
            .arg(task.updated_at_ms)
            .arg(task.expires_at_ms)
            .arg(&task.sealed)
            .arg(task.expires_at_ms + EXPIRED_RETENTION_MS);
        let mut conn = self.conn.clone();
        if self.replication.write(&mut conn, &invocation).await? != 1 {
            return Err(StoreError::Corrupt("a task with this id exists".into()));
        }
        self.index(task).await
    }

    async fn get(&self, id_hash: &str) -> Result<Option<StoredTask>, StoreError> {
        let _span = crate::telemetry::store_span("tasks get", "redis", "get", "tasks");
        self.read(id_hash).await
    }

    async fn replace(&self, task: &StoredTask) -> Result<bool, StoreError> {
        let _span = crate::telemetry::store_span("tasks replace", "redis", "replace", "tasks");
        let script = redis::Script::new(REPLACE);
        let mut invocation = script.key(self.task_key(&task.id_hash));
        invocation
            .arg(task.version)
            .arg(task.status.as_str())
            .arg(task.updated_at_ms)
            .arg(task.expires_at_ms)
            .arg(&task.sealed)
            .arg(task.expires_at_ms + EXPIRED_RETENTION_MS);
        let mut conn = self.conn.clone();
        if self.replication.write(&mut conn, &invocation).await? != 1 {
            return Ok(false);
        }
        // Its time to live may have changed: the indexes follow.
        self.index(task).await?;
        Ok(true)
    }

    async fn open_of(
        &self,
        principal: &Principal,
        now_ms: i64,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        let _span = crate::telemetry::store_span("tasks open_of", "redis", "select", "tasks");
        let mut conn = self.conn.clone();
        // The index knows expiries, not statuses: a few times `limit` of the latest to
        // expire (the last made, as every task lives as long) are read to find the open.
        let id_hashes: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.owner_key(principal))
            .arg("+inf")
            .arg(format!("({now_ms}"))
            .arg("BYSCORE")
            .arg("REV")
            .arg("LIMIT")
            .arg(0)
            .arg(limit.saturating_mul(4))
            .query_async(&mut conn)
            .await?;
        let mut open = Vec::new();
        for id_hash in id_hashes {
            if let Some(task) = self.read(&id_hash).await?
                && !task.status.is_terminal()
                && task.principal == *principal
            {
                open.push(task);
            }
        }
        open.sort_by_key(|task| std::cmp::Reverse(task.created_at_ms));
        open.truncate(limit);
        Ok(open)
    }

    async fn live_count(&self, principal: &Principal, now_ms: i64) -> Result<u64, StoreError> {
        let _span = crate::telemetry::store_span("tasks live_count", "redis", "select", "tasks");
        let mut conn = self.conn.clone();
        let count: u64 = redis::cmd("ZCOUNT")
            .arg(self.owner_key(principal))
            .arg(format!("({now_ms}"))
            .arg("+inf")
            .query_async(&mut conn)
            .await?;
        Ok(count)
    }

    async fn delete_expired(&self, before_ms: i64) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        let id_hashes: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.expiry_key())
            .arg("-inf")
            .arg(format!("({before_ms}"))
            .arg("BYSCORE")
            .query_async(&mut conn)
            .await?;
        for id_hash in &id_hashes {
            self.remove(id_hash).await?;
        }
        Ok(id_hashes.len() as u64)
    }

    async fn forget(&self, principal: &Principal) -> Result<u64, StoreError> {
        let index = self.owner_key(principal);
        let mut conn = self.conn.clone();
        let id_hashes: Vec<String> = redis::cmd("ZRANGE")
            .arg(&index)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let mut removed = 0;
        for id_hash in id_hashes {
            removed += u64::from(self.remove(&id_hash).await?);
        }
        redis::cmd("DEL")
            .arg(&index)
            .query_async::<()>(&mut conn)
            .await?;
        Ok(removed)
    }
}
