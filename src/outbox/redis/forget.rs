//! Erasing a person from the Redis outbox: every list (pending, log, parked) of each
//! connection whose events are about them. A list holds one connection's events, so its
//! records are all one person's.

use super::RedisOutbox;
use crate::identity::Principal;
use crate::store::StoreError;

/// Over one connection's pending list (`KEYS[1]`), its log and parked lists (`KEYS[2]`,
/// `KEYS[3]`), the bucket's list index (`KEYS[4]`) and the endpoint's due set (`KEYS[5]`):
/// if the lists' events are about the principal (`ARGV[1]`, `ARGV[2]`), removes them all and
/// their index entries, in one step (a grant's write cannot slip between); returns how many
/// records went.
const FORGET_LISTS: &str = r"
local head = nil
for i = 1, 3 do
  head = redis.call('LINDEX', KEYS[i], 0)
  if head then break end
end
if not head then return 0 end
-- A record or body that is not JSON is no one's we can tell: left as it is.
local ok, data = pcall(function() return cjson.decode(cjson.decode(head).body).data end)
if not ok then return 0 end
local who = type(data) == 'table' and data.principal
if type(who) ~= 'table' or who.iss ~= ARGV[1] or who.sub ~= ARGV[2] then return 0 end
local removed = 0
for i = 1, 3 do
  removed = removed + redis.call('LLEN', KEYS[i])
  redis.call('DEL', KEYS[i])
end
redis.call('SREM', KEYS[4], KEYS[1])
redis.call('ZREM', KEYS[5], KEYS[1])
return removed
";

impl RedisOutbox {
    /// Removes every delivery of an event about `principal`; how many.
    pub(super) async fn forget_principal(&self, principal: &Principal) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        let mut removed = 0;
        for pending in self.pending_lists().await? {
            let index = match crate::store::redis::layout::Bucket::in_key(&pending) {
                Some(bucket) => self.keys.outbox_lists(bucket),
                None => continue,
            };
            removed += redis::Script::new(FORGET_LISTS)
                .key(&pending)
                .key(self.keys.beside(&pending, "log"))
                .key(self.keys.beside(&pending, "parked"))
                .key(index)
                .key(self.due_of(&pending)?)
                .arg(&principal.issuer)
                .arg(&principal.subject)
                .invoke_async::<u64>(&mut conn)
                .await?;
        }
        Ok(removed)
    }
}
