//! The transactional outbox: lifecycle events on their way to the operator's webhook
//! endpoints.
//!
//! An event is written once per endpoint ([`Delivery`]) by the same store write as the change
//! it reports (`grants` passes its deliveries to each write), so there is no change without
//! its event and no event without its change. Any replica then claims due deliveries
//! ([`OutboxBackend::claim`]; each is claimed by one at a time), signs them the Standard
//! Webhooks way ([`sign`]) and posts them ([`deliver`]), retrying with backoff ([`retry`])
//! until the endpoint answers 2xx or the delivery is parked. A connection's events reach an
//! endpoint in the order they were written: only the oldest pending one of each
//! (connection, endpoint) is ever claimed.
//!
//! Every replica also keeps the outbox ([`housekeeping`]): what waits for one endpoint is
//! capped (`--webhook-max-undelivered`, the oldest parked dropped first), and deliveries for an
//! endpoint no longer configured are parked.
//!
//! Backends: one table on SQLite and PostgreSQL ([`sql`]); on Redis, one list per
//! (connection, endpoint) in the grant's own hash slot, written by the grant's script
//! ([`redis`]).

pub(crate) mod deliver;
pub(crate) mod housekeeping;
pub mod redis;
pub(crate) mod retry;
pub(crate) mod sign;
pub(crate) mod sql;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::identity::Principal;
use crate::store::StoreError;

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not yet accepted by the endpoint; tried again at `next_attempt_at`.
    Pending,
    Delivered,
    /// Given up on (retries spent, or the endpoint refused it); `grantry events retry` sends
    /// it again.
    Parked,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Parked => "parked",
        }
    }
}

impl std::str::FromStr for Status {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "pending" => Ok(Self::Pending),
            "delivered" => Ok(Self::Delivered),
            "parked" => Ok(Self::Parked),
            other => Err(format!(
                "`{other}` is not a delivery status (pending, delivered, parked)"
            )),
        }
    }
}

impl TryFrom<String> for Status {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

/// One event bound for one endpoint, as the outbox keeps it. `body` is the exact JSON sent
/// (and signed); `event_id` is its `webhook-id`, the same on every attempt and endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct Delivery {
    pub event_id: String,
    pub endpoint: String,
    /// The connection's non-reversible tag: its events reach each endpoint in order.
    pub connection: String,
    pub event_type: String,
    pub body: String,
    pub created_at: i64,
    #[sqlx(try_from = "String")]
    pub status: Status,
    /// Attempts started so far.
    pub attempts: i64,
    pub next_attempt_at: i64,
    /// Why the last attempt failed ('' if none did): a status code or a transport error,
    /// never a body.
    pub last_error: String,
    /// When the endpoint accepted it (0: not yet).
    pub delivered_at: i64,
}

/// A lifecycle event before it is addressed: its type, the connection it is about, what it
/// says (`data`) and when it happened.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) event_type: &'static str,
    pub(crate) connection: String,
    pub(crate) data: serde_json::Value,
    pub(crate) at: i64,
}

impl Event {
    /// The event addressed to each endpoint: one id, one body, one delivery per endpoint.
    pub(crate) fn deliveries(
        &self,
        endpoints: &[crate::config::webhooks::EndpointName],
    ) -> Vec<Delivery> {
        if endpoints.is_empty() {
            return Vec::new();
        }
        let event_id = format!("evt_{}", crate::seal::random_id());
        let body = serde_json::json!({
            "type": self.event_type,
            "timestamp": rfc3339(self.at),
            "data": self.data,
        })
        .to_string();
        endpoints
            .iter()
            .map(|endpoint| Delivery {
                event_id: event_id.clone(),
                endpoint: endpoint.as_str().to_owned(),
                connection: self.connection.clone(),
                event_type: self.event_type.to_owned(),
                body: body.clone(),
                created_at: self.at,
                status: Status::Pending,
                attempts: 0,
                next_attempt_at: self.at,
                last_error: String::new(),
                delivered_at: 0,
            })
            .collect()
    }
}

/// A delivery claimed for one attempt by this replica, until the claim lapses.
#[derive(Debug, Clone)]
pub(crate) struct Claimed {
    pub delivery: Delivery,
    /// Which stored record it is (a row's `seq`, or a Redis list's key).
    pub(crate) handle: Handle,
}

#[derive(Debug, Clone)]
pub(crate) enum Handle {
    Row(i64),
    List(String),
}

/// How a claimed attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Delivered {
        at: i64,
    },
    /// Try again at `next_attempt_at`.
    Failed {
        next_attempt_at: i64,
        error: String,
    },
    Parked {
        error: String,
    },
}

/// How many deliveries wait, and how old the oldest is.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Depth {
    pub pending: i64,
    /// Parked deliveries (`None` where counting them means reading every list: Redis).
    pub(crate) parked: Option<i64>,
    /// Seconds since the oldest pending delivery was written (0 if none).
    pub(crate) oldest_pending_age: i64,
}

/// Which deliveries `events list` shows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub status: Option<Status>,
    pub limit: usize,
}

/// The outbox in one store. The writes that add deliveries are the grants' own (see the
/// module); these are the delivery side and the operators' commands.
#[async_trait]
pub(crate) trait OutboxBackend: Send + Sync {
    /// Claims up to `limit` due deliveries for `endpoint`, the oldest pending one of each
    /// of its connections, for `claim_secs`; each is claimed by one caller at a time. The
    /// attempt is counted now, so a replica that dies mid-attempt still moves the backoff on.
    async fn claim(
        &self,
        endpoint: &str,
        now: i64,
        limit: usize,
        claim_secs: i64,
    ) -> Result<Vec<Claimed>, StoreError>;
    /// The endpoints that have pending deliveries (those no longer configured get parked).
    async fn endpoints_pending(&self) -> Result<Vec<String>, StoreError>;
    /// Keeps at most `keep` undelivered (pending or parked) deliveries for `endpoint`,
    /// dropping the oldest parked first, then the oldest pending; returns how many it dropped.
    async fn cap_undelivered(&self, endpoint: &str, keep: u64, now: i64)
    -> Result<u64, StoreError>;
    /// Records how an attempt ended.
    async fn settle(&self, claimed: &Claimed, outcome: &Outcome) -> Result<(), StoreError>;
    /// Deliveries, newest first.
    async fn list(&self, filter: &Filter) -> Result<Vec<Delivery>, StoreError>;
    /// Sends parked deliveries again (all, or those of `event_id`), from now, with their
    /// attempts reset; returns how many.
    async fn retry_parked(&self, event_id: Option<&str>, now: i64) -> Result<u64, StoreError>;
    /// Sends deliveries delivered at or after `since` again, with their ids; returns how many.
    async fn replay(&self, since: i64, now: i64) -> Result<u64, StoreError>;
    /// How many deliveries wait for `endpoints` (all of them, where the store counts
    /// them in one go), and for how long.
    async fn depth(&self, endpoints: &[&str], now: i64) -> Result<Depth, StoreError>;
    /// Forgets deliveries delivered before `before`; returns how many.
    async fn prune_delivered(&self, before: i64) -> Result<u64, StoreError>;
    /// Removes every delivery, in any state, of an event about `principal`; returns how many.
    async fn forget(&self, principal: &Principal) -> Result<u64, StoreError>;
}

/// How long a claim lasts: longer than an attempt can take (the request timeout), so a claim
/// never lapses while its attempt is still under way.
pub(crate) const CLAIM_SECS: i64 = 3 * deliver::REQUEST_TIMEOUT.as_secs() as i64;

/// How long delivered events are kept for `events list` and `events replay`.
pub(crate) const DELIVERED_RETENTION_SECS: i64 = 7 * 86_400;

/// RFC 3339 in UTC, whole seconds.
pub(crate) fn rfc3339(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}
