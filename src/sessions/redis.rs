//! Sessions in Redis: one hash per session with a `PEXPIRE`, so Redis drops it on its own.
//! Creating and touching are scripts, so each is one atomic step. Each owner's sessions are
//! also listed in a sorted set scored by expiry (`mcp_sessions_of:{owner}`), which says
//! which to forget past the cap. The set is in the owner's hash slot, each session in its
//! own: they are written one after the other, never by one script.

use crate::store::RedisConn;
use async_trait::async_trait;

use super::{Created, SessionBackend, SessionRecord};
use crate::store::StoreError;

/// Writes the session unless the id is taken.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'initialize', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// Extends the session only for its owner.
const TOUCH: &str = r"
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
";

/// Lists the session `ARGV[1]` (for `ARGV[2]` ms) in its owner's set, drops what has expired
/// there, and removes and returns the least recently used others past `ARGV[3]` in all.
const LIST: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
local gone = {}
if over <= 0 then return gone end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if #gone >= over then break end
  if id ~= ARGV[1] then table.insert(gone, id) end
end
redis.call('ZREM', KEYS[1], unpack(gone))
return gone
";

/// Moves the session `ARGV[1]` on in its owner's set, if it is listed there.
const RELIST: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
";

pub(crate) struct RedisSessions {
    conn: RedisConn,
    prefix: String,
}

impl RedisSessions {
    pub(crate) fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
        }
    }

    fn key(&self, id: &str) -> String {
        format!("{}mcp_session:{{{id}}}", self.prefix)
    }

    fn owner_key(&self, owner: &str) -> String {
        format!("{}mcp_sessions_of:{{{owner}}}", self.prefix)
    }
}

#[async_trait]
impl SessionBackend for RedisSessions {
    async fn create(
        &self,
        id: &str,
        record: &SessionRecord,
        ttl_ms: i64,
        keep: usize,
    ) -> Result<Created, StoreError> {
        let mut conn = self.conn.clone();
        let created: i64 = redis::Script::new(CREATE)
            .key(self.key(id))
            .arg(&record.owner)
            .arg(&record.initialize)
            .arg(ttl_ms.max(1))
            .invoke_async(&mut conn)
            .await?;
        if created != 1 {
            return Ok(Created::Taken);
        }
        let forgotten: Vec<String> = redis::Script::new(LIST)
            .key(self.owner_key(&record.owner))
            .arg(id)
            .arg(ttl_ms.max(1))
            .arg(keep.max(1))
            .invoke_async(&mut conn)
            .await?;
        for gone in &forgotten {
            redis::cmd("DEL")
                .arg(self.key(gone))
                .query_async::<()>(&mut conn)
                .await?;
        }
        Ok(Created::Stored { forgotten })
    }

    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let mut conn = self.conn.clone();
        let (owner, initialize): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(self.key(id))
            .arg("owner")
            .arg("initialize")
            .query_async(&mut conn)
            .await?;
        Ok(owner
            .zip(initialize)
            .map(|(owner, initialize)| SessionRecord { owner, initialize }))
    }

    async fn touch(&self, id: &str, owner: &str, ttl_ms: i64) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let touched: i64 = redis::Script::new(TOUCH)
            .key(self.key(id))
            .arg(owner)
            .arg(ttl_ms.max(1))
            .invoke_async(&mut conn)
            .await?;
        if touched == 1 {
            redis::Script::new(RELIST)
                .key(self.owner_key(owner))
                .arg(id)
                .arg(ttl_ms.max(1))
                .invoke_async::<i64>(&mut conn)
                .await?;
        }
        Ok(touched == 1)
    }

    async fn delete_expired(&self) -> Result<u64, StoreError> {
        Ok(0) // Redis drops an expired session by itself (`PEXPIRE`).
    }

    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let owner: Option<String> = redis::cmd("HGET")
            .arg(self.key(id))
            .arg("owner")
            .query_async(&mut conn)
            .await?;
        redis::cmd("DEL")
            .arg(self.key(id))
            .query_async::<()>(&mut conn)
            .await?;
        if let Some(owner) = owner {
            redis::cmd("ZREM")
                .arg(self.owner_key(&owner))
                .arg(id)
                .query_async::<()>(&mut conn)
                .await?;
        }
        Ok(())
    }

    async fn forget(&self, owner: &str) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        let ids: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.owner_key(owner))
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let mut removed = 0;
        for id in ids {
            // Each session in its own slot: one command each.
            removed += redis::cmd("DEL")
                .arg(self.key(&id))
                .query_async::<u64>(&mut conn)
                .await?;
        }
        redis::cmd("DEL")
            .arg(self.owner_key(owner))
            .query_async::<()>(&mut conn)
            .await?;
        Ok(removed)
    }
}
