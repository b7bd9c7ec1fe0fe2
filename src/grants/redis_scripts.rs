//! The Lua scripts of the Redis grant rows ([`super::redis`]): each runs atomically in Redis,
//! so a version check and the write it guards (with the write's outbox events) are one step.

/// Writes the row's fields (ARGV 1-15; `used_at`, the 15th, only when given), files the
/// grant in its bucket's grant index (`KEYS[4]`) and keep-alive schedule (`KEYS[2]`) by
/// `keepalive_at`, and one with an account (`ARGV[17]`) in the owner's account index
/// (`KEYS[3]`).
pub(super) const WRITE_ROW: &str = r"
local function write_row(version)
  redis.call('SADD', KEYS[4], KEYS[1])
  redis.call('HSET', KEYS[1], 'tokens_sealed', ARGV[1], 'access_expires_at', ARGV[2],
    'scopes', ARGV[3], 'version', version, 'created_at', ARGV[5], 'updated_at', ARGV[6],
    'key_id', ARGV[7], 'principal_iss', ARGV[8], 'principal_sub', ARGV[9], 'provider', ARGV[10],
    'connection_id', ARGV[11], 'state', ARGV[12], 'health', ARGV[13], 'keepalive_at', ARGV[14])
  if ARGV[15] ~= '' then redis.call('HSET', KEYS[1], 'used_at', ARGV[15]) end
  if ARGV[17] ~= '' then
    redis.call('HSET', KEYS[1], 'account', ARGV[17])
    redis.call('SADD', KEYS[3], KEYS[1])
  end
  if tonumber(ARGV[14]) > 0 then redis.call('ZADD', KEYS[2], ARGV[14], KEYS[1])
  else redis.call('ZREM', KEYS[2], KEYS[1]) end
end
";

/// A sign-in: the row, with a version above any earlier one's, and its events.
pub(super) const UPSERT: &str = r"
local old = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
write_row(math.max(old + 1, tonumber(ARGV[4])))
";

/// Replaces the row (and adds its events) only while it has the expected version (`ARGV[16]`).
pub(super) const COMPARE_AND_SET: &str = r"
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[16] then return 0 end
write_row(ARGV[4])
";

/// Deletes the row (and adds its events) only while it has the expected version (`ARGV[1]`).
pub(super) const DELETE_IF_VERSION: &str = r"
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], KEYS[1])
redis.call('SREM', KEYS[3], KEYS[1])
redis.call('SREM', KEYS[4], KEYS[1])
";

pub(super) const TOUCH: &str = r"
local used = redis.call('HGET', KEYS[1], 'used_at')
if used and tonumber(used) <= tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'used_at', ARGV[1], 'used_by', ARGV[2])
end
";

pub(super) const RESCHEDULE: &str = r"
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'keepalive_at', ARGV[2])
if tonumber(ARGV[2]) > 0 then redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
else redis.call('ZREM', KEYS[2], KEYS[1]) end
return 1
";

/// After the row's fields (ARGV 1-15): the expected version (16), the account (17), then the
/// records.
pub(super) const ARG_RECORDS: usize = 18;
