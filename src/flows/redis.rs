//! Flows in Redis: one hash per flow, keyed by the hash of its OAuth `state`, with indexes
//! from the flow id and the ticket id. Every key expires on its own (the flow's expiry plus
//! the retention), so nothing needs cleaning up. Each operation touches one key per command,
//! so the layout works on Redis Cluster too.

use crate::store::RedisConn;
use async_trait::async_trait;
use std::collections::HashMap;

use super::record::missed_claim;
use super::{Claim, FLOW_RETENTION_SECS, Flow, FlowBackend, FlowStatus};
use crate::identity::Principal;
use crate::store::StoreError;

pub(crate) struct RedisFlows {
    conn: RedisConn,
    prefix: String,
}

/// Claims a pending, unexpired flow atomically; otherwise says what it found.
const CLAIM: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'unknown'} end
local status = redis.call('HGET', KEYS[1], 'status')
local expires_at = redis.call('HGET', KEYS[1], 'expires_at')
local outcome = 'missed'
if status == 'pending' and tonumber(expires_at) >= tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'status', 'redeeming', 'claimed_at', ARGV[1])
  outcome = 'claimed'
end
local all = redis.call('HGETALL', KEYS[1])
table.insert(all, 1, outcome)
return all
";

/// Marks a flow failed if it is still redeeming and was claimed before `ARGV[1]`; 1 if it did.
const FAIL_STUCK: &str = r"
if redis.call('HGET', KEYS[1], 'status') ~= 'redeeming' then return 0 end
local claimed_at = redis.call('HGET', KEYS[1], 'claimed_at')
if claimed_at and tonumber(claimed_at) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'status', 'failed')
return 1
";

/// Marks one flow superseded if it is still pending and `ARGV[1]` is 1; says what it did.
const SUPERSEDE: &str = r"
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 'gone' end
if status ~= 'pending' then return 'done' end
if ARGV[1] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'superseded')
  return 'superseded'
end
return 'kept'
";

impl RedisFlows {
    pub(crate) fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            prefix: prefix.to_owned(),
        }
    }

    fn flow_key(&self, state_hash: &str) -> String {
        format!("{}flow:{{{state_hash}}}", self.prefix)
    }

    fn id_key(&self, flow_id: &str) -> String {
        format!("{}flow-id:{{{flow_id}}}", self.prefix)
    }

    /// The principal's flows by creation time (members are state hashes).
    fn principal_key(&self, principal: &Principal) -> String {
        format!("{}flows-of:{{{}}}", self.prefix, principal.tag())
    }

    fn ticket_key(&self, ticket_id: &str) -> String {
        format!("{}ticket:{{{ticket_id}}}", self.prefix)
    }
}

fn flow_from_hash(mut h: HashMap<String, String>) -> Result<Flow, StoreError> {
    let mut take = |name: &str| {
        h.remove(name)
            .ok_or_else(|| StoreError::Corrupt(format!("flow without `{name}`")))
    };
    let number = |text: String| {
        text.parse::<i64>()
            .map_err(|_| StoreError::Corrupt("flow time is not a number".into()))
    };
    Ok(Flow {
        id: take("id")?,
        ticket_id: take("ticket_id")?,
        principal: Principal {
            issuer: take("principal_iss")?,
            subject: take("principal_sub")?,
        },
        provider: take("provider")?
            .parse()
            .map_err(|e| StoreError::Corrupt(format!("flow hash: {e}")))?,
        state_hash: take("state_hash")?,
        binding_hash: take("binding_hash")?,
        status: FlowStatus::parse(&take("status")?)?,
        created_at: number(take("created_at")?)?,
        expires_at: number(take("expires_at")?)?,
        claimed_at: h.remove("claimed_at").map(number).transpose()?,
        verifier_sealed: h.remove("verifier_sealed"),
        scopes: crate::access::scope_list(&h.remove("scopes").unwrap_or_default()),
        handout: super::Handout::parse(&h.remove("handout").unwrap_or_default()),
    })
}

#[async_trait]
impl FlowBackend for RedisFlows {
    async fn insert(&self, flow: &Flow) -> Result<(), StoreError> {
        let _span = crate::telemetry::store_span("flows insert", "redis", "insert", "flows");
        let ttl = (flow.expires_at - grantry_base::clock::unix_now() + FLOW_RETENTION_SECS).max(1);
        let mut fields: Vec<(&str, String)> = vec![
            ("id", flow.id.clone()),
            ("ticket_id", flow.ticket_id.clone()),
            ("principal_iss", flow.principal.issuer.clone()),
            ("principal_sub", flow.principal.subject.clone()),
            ("provider", flow.provider.to_string()),
            ("state_hash", flow.state_hash.clone()),
            ("binding_hash", flow.binding_hash.clone()),
            ("status", flow.status.as_str().to_owned()),
            ("created_at", flow.created_at.to_string()),
            ("expires_at", flow.expires_at.to_string()),
            ("scopes", flow.scopes.join(" ")),
            ("handout", flow.handout.as_str().to_owned()),
        ];
        if let Some(verifier) = &flow.verifier_sealed {
            fields.push(("verifier_sealed", verifier.clone()));
        }
        let key = self.flow_key(&flow.state_hash);
        let mut conn = self.conn.clone();
        // The flow first, its indexes after: an index never points at nothing for long.
        redis::pipe()
            .atomic()
            .hset_multiple(&key, &fields)
            .expire(&key, ttl)
            .query_async::<()>(&mut conn)
            .await?;
        // Each index in its own slot (a cluster's pipeline keeps to one), side by side.
        let mut by_id = redis::pipe();
        by_id.set_ex(self.id_key(&flow.id), &flow.state_hash, ttl as u64);
        let mut by_ticket = redis::pipe();
        by_ticket.set_ex(
            self.ticket_key(&flow.ticket_id),
            &flow.state_hash,
            ttl as u64,
        );
        let mut by_principal = redis::pipe();
        by_principal
            // Milliseconds: several sign-ins started within one second still keep their order.
            .zadd(
                self.principal_key(&flow.principal),
                &flow.state_hash,
                grantry_base::clock::unix_now_millis(),
            )
            .expire(self.principal_key(&flow.principal), ttl);
        let mut conns = (self.conn.clone(), self.conn.clone(), conn);
        tokio::try_join!(
            by_id.query_async::<()>(&mut conns.0),
            by_ticket.query_async::<()>(&mut conns.1),
            by_principal.query_async::<()>(&mut conns.2),
        )?;
        Ok(())
    }

    async fn supersede_pending(&self, principal: &Principal, keep: u32) -> Result<u64, StoreError> {
        let index = self.principal_key(principal);
        let mut conn = self.conn.clone();
        let newest_first: Vec<String> = redis::cmd("ZREVRANGE")
            .arg(&index)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let (mut pending, mut superseded) = (0u32, 0u64);
        for state_hash in newest_first {
            let outcome: String = redis::Script::new(SUPERSEDE)
                .key(self.flow_key(&state_hash))
                .arg(u8::from(pending >= keep))
                .invoke_async(&mut conn)
                .await?;
            match outcome.as_str() {
                "kept" => pending += 1,
                "superseded" => superseded += 1,
                _ => {}
            }
            if outcome == "gone" {
                // Expired: the index no longer needs it. A finished flow stays listed until
                // it expires, so erasing its owner finds it.
                redis::cmd("ZREM")
                    .arg(&index)
                    .arg(&state_hash)
                    .query_async::<()>(&mut conn)
                    .await?;
            }
        }
        Ok(superseded)
    }

    async fn claim(&self, state_hash: &str, now: i64) -> Result<Claim, StoreError> {
        let _span = crate::telemetry::store_span("flows claim", "redis", "claim", "flows");
        let mut conn = self.conn.clone();
        let reply: Vec<String> = redis::Script::new(CLAIM)
            .key(self.flow_key(state_hash))
            .arg(now)
            .invoke_async(&mut conn)
            .await?;
        let flow = || {
            let pairs = reply[1..].chunks(2).filter(|p| p.len() == 2);
            flow_from_hash(pairs.map(|p| (p[0].clone(), p[1].clone())).collect())
        };
        match reply.first().map(String::as_str) {
            Some("unknown") => Ok(Claim::Unknown),
            Some("claimed") => Ok(Claim::Claimed(Box::new(flow()?))),
            Some("missed") => Ok(missed_claim(flow()?, now)),
            _ => Err(StoreError::Corrupt("unexpected claim reply".into())),
        }
    }

    async fn finish(&self, flow_id: &str, status: FlowStatus) -> Result<(), StoreError> {
        let _span = crate::telemetry::store_span("flows finish", "redis", "finish", "flows");
        let mut conn = self.conn.clone();
        let state_hash: Option<String> = redis::cmd("GET")
            .arg(self.id_key(flow_id))
            .query_async(&mut conn)
            .await?;
        if let Some(state_hash) = state_hash {
            redis::cmd("HSET")
                .arg(self.flow_key(&state_hash))
                .arg("status")
                .arg(status.as_str())
                .query_async::<()>(&mut conn)
                .await?;
        }
        Ok(())
    }

    async fn fail_stuck(&self, flow: &Flow, claimed_before: i64) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let failed: i64 = redis::Script::new(FAIL_STUCK)
            .key(self.flow_key(&flow.state_hash))
            .arg(claimed_before)
            .invoke_async(&mut conn)
            .await?;
        Ok(failed == 1)
    }

    async fn latest_for_ticket(&self, ticket_id: &str) -> Result<Option<Flow>, StoreError> {
        let mut conn = self.conn.clone();
        let state_hash: Option<String> = redis::cmd("GET")
            .arg(self.ticket_key(ticket_id))
            .query_async(&mut conn)
            .await?;
        let Some(state_hash) = state_hash else {
            return Ok(None);
        };
        let hash: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.flow_key(&state_hash))
            .query_async(&mut conn)
            .await?;
        if hash.is_empty() {
            return Ok(None);
        }
        flow_from_hash(hash).map(Some)
    }

    async fn delete_expired(&self, _before: i64) -> Result<u64, StoreError> {
        Ok(0) // every key carries its own expiry
    }

    async fn forget(&self, principal: &Principal) -> Result<u64, StoreError> {
        let index = self.principal_key(principal);
        let mut conn = self.conn.clone();
        let state_hashes: Vec<String> = redis::cmd("ZRANGE")
            .arg(&index)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let mut removed = 0;
        for state_hash in state_hashes {
            // The flow and its two indexes are in three slots: one command each.
            let flow_key = self.flow_key(&state_hash);
            let ids: (Option<String>, Option<String>) = redis::cmd("HMGET")
                .arg(&flow_key)
                .arg("id")
                .arg("ticket_id")
                .query_async(&mut conn)
                .await?;
            if let Some(id) = ids.0 {
                redis::cmd("DEL")
                    .arg(self.id_key(&id))
                    .query_async::<()>(&mut conn)
                    .await?;
            }
            if let Some(ticket) = ids.1 {
                // A ticket is one person's: whichever of their flows it points at, it goes.
                redis::cmd("DEL")
                    .arg(self.ticket_key(&ticket))
                    .query_async::<()>(&mut conn)
                    .await?;
            }
            removed += redis::cmd("DEL")
                .arg(&flow_key)
                .query_async::<u64>(&mut conn)
                .await?;
        }
        redis::cmd("DEL")
            .arg(&index)
            .query_async::<()>(&mut conn)
            .await?;
        Ok(removed)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.conn.ready().await
    }
}
