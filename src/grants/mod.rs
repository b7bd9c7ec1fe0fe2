//! Grants, as stored: the tokens a user gave grantry for one account at one provider, sealed
//! and keyed by (principal, provider, account) ([`GrantKey`]), with the connection's health
//! ([`health`]). What a change of a connection's life writes, and when, is the connections
//! service's (`crate::connections`); this module keeps the rows.
//!
//! Backends store opaque rows ([`GrantRow`]); [`Grants`] seals and opens the tokens (with the
//! row's key in the associated data), writes a row with the events of its change in one store
//! write ([`mod@write`]), reads the rows the keep-alive is due to look at ([`schedule`]), and tells
//! waiting retries when a grant lands ([`events`]; across replicas by PostgreSQL
//! `LISTEN/NOTIFY`, [`bus_postgres`], or Redis pub/sub, [`bus_redis`]), and reads every
//! row, openable or not, for the operators' commands ([`operators`]).

pub(crate) mod bus_postgres;
pub(crate) mod bus_redis;
pub(crate) mod events;
pub(crate) mod health;
mod key;
mod operators;
mod record;
pub(crate) mod redis;
mod redis_scripts;
mod schedule;
pub(crate) mod sql;
mod write;

use std::sync::Arc;

use async_trait::async_trait;

use crate::identity::{McpClient, Principal};
use crate::ids::{AccountId, ConnectionId, ProviderId};
use crate::outbox::Delivery;
use crate::providers::oauth::TokenSet;
use crate::seal::{Purpose, Sealer};
use crate::store::StoreError;
pub(crate) use events::EventBus;
pub use events::GrantEvents;
pub use health::{Health, ReauthReason, State};
pub use key::GrantKey;
pub(crate) use operators::Found;
pub(crate) use schedule::Due;
pub use schedule::Reschedule;
pub(crate) use write::Stored;

/// A grant row as a backend stores it: tokens only in sealed form.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct GrantRow {
    pub tokens_sealed: String,
    pub(crate) access_expires_at: i64,
    /// Space-separated granted scopes.
    pub(crate) scopes: String,
    pub(crate) version: i64,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
    /// Hex id of the key the tokens are sealed under ('' when unknown).
    pub(crate) key_id: String,
    /// Stable across reconnects ('' on rows from before it: see [`Grant::connection_id`]).
    pub(crate) connection_id: String,
    /// [`State`] as text.
    pub(crate) state: String,
    /// [`Health`] as JSON.
    pub(crate) health: String,
    /// When the keep-alive next looks at the grant (0: never).
    pub(crate) keepalive_at: i64,
    /// When a tool last used it (0: not since it was recorded).
    pub(crate) used_at: i64,
    /// The MCP client it was last used through ([`McpClient::stored`]; '' for none). Only
    /// [`GrantBackend::touch`] writes it: a sign-in or a refresh keeps it.
    pub(crate) used_by: String,
}

/// How many grants each key seals.
pub(crate) type KeyUsage = Vec<(String, i64)>;

/// Storage for grant rows; one implementation per backend.
#[async_trait]
pub trait GrantBackend: Send + Sync {
    /// The store's kind, as traces name it (`db.system.name`).
    fn system(&self) -> &'static str;
    async fn get(&self, key: &GrantKey) -> Result<Option<GrantRow>, StoreError>;
    /// Every row of `principal` at `provider` (one per account), in no particular order.
    async fn list(
        &self,
        principal: &Principal,
        provider: &ProviderId,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError>;
    /// Every row, or every row of `principal`, in no particular order: for operators.
    async fn all(
        &self,
        principal: Option<&Principal>,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError>;
    /// Inserts or replaces the row (a sign-in); the row's version must be one more than any
    /// earlier row's. `events` are added to the outbox in the same write.
    async fn upsert(
        &self,
        key: &GrantKey,
        row: &GrantRow,
        events: &[Delivery],
    ) -> Result<(), StoreError>;
    /// Replaces the row only if it still has `expected_version`, with `events` in the same
    /// write; tells whether it did (and so whether the events were written).
    async fn compare_and_set(
        &self,
        key: &GrantKey,
        expected_version: i64,
        row: &GrantRow,
        events: &[Delivery],
    ) -> Result<bool, StoreError>;
    /// Deletes the row only if it still has `version` (nobody refreshed or reconnected since),
    /// with `events` in the same write; tells whether it did.
    async fn delete_if_version(
        &self,
        key: &GrantKey,
        version: i64,
        events: &[Delivery],
    ) -> Result<bool, StoreError>;
    /// Records a use at `at` through `by` (no new version: it changes no token and no
    /// state), unless a later one is recorded.
    async fn touch(&self, key: &GrantKey, at: i64, by: &str) -> Result<(), StoreError>;
    /// Moves the keep-alive's next look at each grant to its time while its row still has the
    /// version given (no new version), in one write (a transaction, a pipeline).
    async fn reschedule(&self, moves: &[Reschedule]) -> Result<(), StoreError>;
    /// Up to `limit` rows the keep-alive should look at by `now`, the most overdue first.
    async fn due_for_keepalive(
        &self,
        now: i64,
        limit: usize,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError>;
    /// How many grants each (provider, state) has.
    async fn count_by_state(&self) -> Result<Vec<(String, String, i64)>, StoreError>;
    /// How many rows each key id seals.
    async fn key_usage(&self) -> Result<KeyUsage, StoreError>;
    /// Up to `limit` rows sealed under a key other than `key_id`.
    async fn sealed_under_other_keys(
        &self,
        key_id: &str,
        limit: usize,
    ) -> Result<Vec<(GrantKey, GrantRow)>, StoreError>;
}

/// What one rewrap batch did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RewrapReport {
    pub rewrapped: usize,
    /// Rows written by someone else between reading and re-sealing (left for the next batch).
    pub changed_meanwhile: usize,
}

/// An opened grant.
#[derive(Debug, Clone)]
pub struct Grant {
    pub tokens: TokenSet,
    pub version: i64,
    /// When the connection was first made (kept through refreshes and reconnects).
    pub created_at: i64,
    /// The last write of its tokens (a sign-in or a refresh).
    pub(crate) updated_at: i64,
    pub connection_id: ConnectionId,
    pub state: State,
    pub health: Health,
    pub(crate) used_at: i64,
    /// The MCP client it was last used through, if one was recorded.
    pub(crate) used_by: Option<McpClient>,
}

impl Grant {
    /// Whether its tokens may be used (else the user must reconnect first).
    pub(crate) fn is_usable(&self) -> bool {
        self.state != State::NeedsReauth
    }

    /// The provider's id of the account it is used with (`""` where there are none).
    pub fn account_id(&self) -> Option<&AccountId> {
        self.tokens.account.as_ref().map(|a| &a.id)
    }

    /// When the user last signed in for it: a reconnection makes it another grant to confirm
    /// a disconnection of.
    pub(crate) fn signed_in_at(&self) -> i64 {
        match self.health.signed_in_at {
            0 => self.created_at,
            at => at,
        }
    }
}

/// Grants with their tokens sealed at rest.
#[derive(Clone)]
pub struct Grants {
    backend: Arc<dyn GrantBackend>,
    sealer: Arc<Sealer>,
    events: GrantEvents,
}

impl Grants {
    pub fn new(backend: Arc<dyn GrantBackend>, sealer: Arc<Sealer>, events: GrantEvents) -> Self {
        Self {
            backend,
            sealer,
            events,
        }
    }

    pub(crate) fn events(&self) -> &GrantEvents {
        &self.events
    }

    /// Reads and opens a grant, in any state (see [`Grant::is_usable`]). A row that does not
    /// open (wrong key, copied from another row) is an error, never a silent "not connected".
    pub async fn get(&self, key: &GrantKey) -> Result<Option<Grant>, StoreError> {
        let _span =
            crate::telemetry::store_span("grants get", self.backend.system(), "get", "grants");
        let Some(row) = self.backend.get(key).await? else {
            return Ok(None);
        };
        self.open(key, row).map(Some)
    }

    /// The grants of `principal` at `provider`, one per account, oldest connection first.
    pub async fn list(
        &self,
        principal: &Principal,
        provider: &ProviderId,
    ) -> Result<Vec<(GrantKey, Grant)>, StoreError> {
        let _span =
            crate::telemetry::store_span("grants list", self.backend.system(), "list", "grants");
        let mut grants = Vec::new();
        for (key, row) in self.backend.list(principal, provider).await? {
            let grant = self.open(&key, row)?;
            grants.push((key, grant));
        }
        // Connected in the same second: by the account's name, as a person would look.
        let order = |g: &Grant| {
            let name = g.tokens.account.as_ref().map(|a| a.name.to_lowercase());
            (g.created_at, name, g.connection_id.clone())
        };
        grants.sort_by_cached_key(|(_, g)| order(g));
        Ok(grants)
    }

    /// Where a sign-in to `account` at `provider` is stored: over the principal's grant for
    /// the same account if there is one (a reconnection, even of a grant keyed from before
    /// accounts were kept), else under a key of its own (another account).
    pub(crate) async fn key_for_sign_in(
        &self,
        principal: &Principal,
        provider: &ProviderId,
        account: Option<&crate::providers::Account>,
    ) -> Result<GrantKey, StoreError> {
        let account_id = account.map(|a| &a.id);
        let existing = self.list(principal, provider).await?;
        let same_account = existing.iter().find(|(_, g)| g.account_id() == account_id);
        // A grant kept before its provider named accounts (the demo's, before its users were
        // accounts) is the first account signed in to: taken over, not left beside it.
        let from_before = || {
            account_id
                .and(existing.iter().find(|(_, g)| g.account_id().is_none()))
                .filter(|_| existing.len() == 1)
        };
        if let Some((key, _)) = same_account.or_else(from_before) {
            return Ok(key.clone());
        }
        Ok(GrantKey {
            principal: principal.clone(),
            provider: provider.clone(),
            account: account_id.cloned(),
        })
    }

    fn open(&self, key: &GrantKey, row: GrantRow) -> Result<Grant, StoreError> {
        let corrupt = |e: String| StoreError::Corrupt(format!("grant {}: {e}", key.tag()));
        let plain = self
            .sealer
            .open_bytes(Purpose::StoredGrant, &key.binding(), &row.tokens_sealed)
            .map_err(|e| unopened(key, &row.tokens_sealed, e))?;
        let tokens: TokenSet =
            serde_json::from_slice(&plain).map_err(|e| corrupt(e.to_string()))?;
        let state =
            State::parse(&row.state).ok_or_else(|| corrupt(format!("state `{}`", row.state)))?;
        Ok(Grant {
            tokens,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
            connection_id: connection_id(key, &row.connection_id),
            state,
            health: Health::from_json(&row.health),
            used_at: row.used_at,
            used_by: McpClient::from_stored(&row.used_by),
        })
    }

    /// Sealed `tokens` under the current key, for a row of `key`.
    fn seal_tokens(&self, key: &GrantKey, tokens: &TokenSet) -> String {
        let json = serde_json::to_vec(tokens).expect("tokens serialize");
        self.sealer
            .seal_bytes(Purpose::StoredGrant, &key.binding(), &json)
    }

    /// The ids of the keys grants can be opened with, sealing key first.
    pub(crate) fn key_ids(&self) -> Vec<String> {
        self.sealer.key_ring().key_ids()
    }

    /// How many grants each key seals.
    pub(crate) async fn key_usage(&self) -> Result<KeyUsage, StoreError> {
        self.backend.key_usage().await
    }

    /// Re-seals up to `batch` grants still under an older key with the current one, each with
    /// compare-and-set on its version (a grant refreshed meanwhile is already re-sealed).
    /// Returns how many it re-sealed; 0 means none is left.
    pub(crate) async fn rewrap_batch(&self, batch: usize) -> Result<RewrapReport, StoreError> {
        let current = self.sealer.key_ring().current_key_id();
        let rows = self
            .backend
            .sealed_under_other_keys(&current, batch)
            .await?;
        let mut report = RewrapReport::default();
        for (key, row) in rows {
            let plain = self
                .sealer
                .open_bytes(Purpose::StoredGrant, &key.binding(), &row.tokens_sealed)
                .map_err(|e| unopened(&key, &row.tokens_sealed, e))?;
            let mut next = row.clone();
            next.tokens_sealed =
                self.sealer
                    .seal_bytes(Purpose::StoredGrant, &key.binding(), &plain);
            next.key_id = current.clone();
            next.version = row.version + 1;
            if self
                .backend
                .compare_and_set(&key, row.version, &next, &[])
                .await?
            {
                report.rewrapped += 1;
            } else {
                report.changed_meanwhile += 1;
            }
        }
        Ok(report)
    }
}

/// A connection's id: the row's, or for rows written before ids were kept, one derived from
/// the key (stable, and no more revealing than the key's tag).
pub(crate) fn connection_id(key: &GrantKey, stored: &str) -> ConnectionId {
    if stored.is_empty() {
        ConnectionId::stored(format!("conn_{}", &key.tag()[..22]))
    } else {
        ConnectionId::stored(stored.to_owned())
    }
}

/// Why a grant's sealed tokens did not open: under a key this replica lacks (the replicas'
/// keys differ), or else a damaged record.
fn unopened(key: &GrantKey, sealed: &str, error: crate::seal::OpenError) -> StoreError {
    match (error, Sealer::key_id_of(sealed)) {
        (crate::seal::OpenError::UnknownKey, Some(key_id)) => StoreError::Unopenable {
            what: format!("grant {}", key.tag()),
            key_id,
        },
        (error, _) => StoreError::Corrupt(format!("grant {}: {error}", key.tag())),
    }
}
