//! Grants: the tokens a user gave grantry for one provider, stored sealed and keyed by
//! (principal, provider).
//!
//! Backends store opaque rows ([`GrantRow`]); [`Grants`] seals and opens the tokens (with the
//! row's key in the associated data), bumps the version for compare-and-set writes, and tells
//! waiting retries when a grant lands ([`events`]; across replicas by PostgreSQL
//! `LISTEN/NOTIFY`, [`bus_postgres`], or Redis pub/sub, [`bus_redis`]). The token lifecycle
//! is here too: [`TokenKeeper`] refreshes once across replicas ([`access`]) and runs the one
//! loop every provider call goes through ([`calls`]).

pub mod access;
pub mod bus_postgres;
pub mod bus_redis;
pub mod calls;
pub mod events;
mod record;
pub mod redis;
pub mod sql;

use std::sync::Arc;

use async_trait::async_trait;

use crate::identity::Principal;
use crate::providers::oauth::TokenSet;
use crate::seal::{Purpose, Sealer};
use crate::store::StoreError;
pub use access::{Access, TokenKeeper};
pub use calls::Called;
pub use events::{EventBus, GrantEvents};

/// Which grant: a principal's connection to one provider.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GrantKey {
    pub principal: Principal,
    pub provider: String,
}

impl GrantKey {
    /// The associated-data binding for this row's sealed tokens.
    fn binding(&self) -> Vec<u8> {
        let mut b = Vec::new();
        for part in [
            "grant/v1",
            &self.principal.issuer,
            &self.principal.subject,
            &self.provider,
        ] {
            b.extend_from_slice(&(part.len() as u32).to_be_bytes());
            b.extend_from_slice(part.as_bytes());
        }
        b
    }

    /// A non-reversible tag for logs and wake-up events.
    pub fn tag(&self) -> String {
        crate::seal::digest(
            "grantry/grant-key/v1",
            &[self.principal.tag().as_bytes(), self.provider.as_bytes()],
        )
    }
}

/// A grant row as a backend stores it: tokens only in sealed form.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct GrantRow {
    pub tokens_sealed: String,
    pub access_expires_at: i64,
    /// Space-separated granted scopes.
    pub scopes: String,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// Hex id of the key the tokens are sealed under ('' when unknown).
    pub key_id: String,
}

/// How many grants each key seals.
pub type KeyUsage = Vec<(String, i64)>;

/// Storage for grant rows; one implementation per backend.
#[async_trait]
pub trait GrantBackend: Send + Sync {
    async fn get(&self, key: &GrantKey) -> Result<Option<GrantRow>, StoreError>;
    /// Inserts or replaces the row (a new sign-in); the row's version must be one more than
    /// any earlier row's.
    async fn upsert(&self, key: &GrantKey, row: &GrantRow) -> Result<(), StoreError>;
    /// Replaces the row only if it still has `expected_version`; tells whether it did.
    async fn compare_and_set(
        &self,
        key: &GrantKey,
        expected_version: i64,
        row: &GrantRow,
    ) -> Result<bool, StoreError>;
    async fn delete(&self, key: &GrantKey) -> Result<bool, StoreError>;
    /// Deletes the row only if it still has `version` (nobody refreshed or reconnected since).
    async fn delete_if_version(&self, key: &GrantKey, version: i64) -> Result<bool, StoreError>;
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
pub struct RewrapReport {
    pub rewrapped: usize,
    /// Rows written by someone else between reading and re-sealing (left for the next batch).
    pub changed_meanwhile: usize,
}

/// An opened grant.
#[derive(Debug, Clone)]
pub struct Grant {
    pub tokens: TokenSet,
    pub version: i64,
    pub created_at: i64,
}

/// Which write of a grant a row is.
struct Write {
    version: i64,
    /// When the grant was first stored (kept through refreshes).
    created_at: i64,
    updated_at: i64,
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

    pub fn events(&self) -> &GrantEvents {
        &self.events
    }

    /// Reads and opens a grant. A row that does not open (wrong key, copied from another row)
    /// is an error, never a silent "not connected".
    pub async fn get(&self, key: &GrantKey) -> Result<Option<Grant>, StoreError> {
        let Some(row) = self.backend.get(key).await? else {
            return Ok(None);
        };
        let plain = self
            .sealer
            .open_bytes(Purpose::StoredGrant, &key.binding(), &row.tokens_sealed)
            .map_err(|e| StoreError::Corrupt(format!("grant {}: {e}", key.tag())))?;
        let tokens: TokenSet = serde_json::from_slice(&plain)
            .map_err(|e| StoreError::Corrupt(format!("grant {}: {e}", key.tag())))?;
        Ok(Some(Grant {
            tokens,
            version: row.version,
            created_at: row.created_at,
        }))
    }

    /// The row of `key` holding `tokens`, sealed under the current key, as the write `at`.
    fn seal_row(&self, key: &GrantKey, tokens: &TokenSet, at: Write) -> GrantRow {
        let json = serde_json::to_vec(tokens).expect("tokens serialize");
        GrantRow {
            tokens_sealed: self
                .sealer
                .seal_bytes(Purpose::StoredGrant, &key.binding(), &json),
            access_expires_at: tokens.expires_at,
            scopes: tokens.scopes.join(" "),
            version: at.version,
            created_at: at.created_at,
            updated_at: at.updated_at,
            key_id: self.sealer.key_ring().current_key_id(),
        }
    }

    /// Stores the grant of a completed sign-in (replacing any earlier one), then wakes the
    /// retries waiting for it. Returns only after the store acknowledged the write.
    pub async fn store_new(
        &self,
        key: &GrantKey,
        tokens: &TokenSet,
        now: i64,
    ) -> Result<(), StoreError> {
        let version = match self.backend.get(key).await? {
            Some(old) => old.version + 1,
            None => 1,
        };
        let at = Write {
            version,
            created_at: now,
            updated_at: now,
        };
        let row = self.seal_row(key, tokens, at);
        self.backend.upsert(key, &row).await?;
        self.events.notify(key).await;
        Ok(())
    }

    /// Writes refreshed tokens if nobody else changed the grant since `previous` was read.
    pub async fn replace_if_unchanged(
        &self,
        key: &GrantKey,
        previous: &Grant,
        tokens: &TokenSet,
        now: i64,
    ) -> Result<bool, StoreError> {
        let at = Write {
            version: previous.version + 1,
            created_at: previous.created_at,
            updated_at: now,
        };
        let row = self.seal_row(key, tokens, at);
        self.backend
            .compare_and_set(key, previous.version, &row)
            .await
    }

    pub async fn delete(&self, key: &GrantKey) -> Result<bool, StoreError> {
        self.backend.delete(key).await
    }

    /// The ids of the keys grants can be opened with, sealing key first.
    pub fn key_ids(&self) -> Vec<String> {
        self.sealer.key_ring().key_ids()
    }

    /// How many grants each key seals.
    pub async fn key_usage(&self) -> Result<KeyUsage, StoreError> {
        self.backend.key_usage().await
    }

    /// Re-seals up to `batch` grants still under an older key with the current one, each with
    /// compare-and-set on its version (a grant refreshed meanwhile is already re-sealed).
    /// Returns how many it re-sealed; 0 means none is left.
    pub async fn rewrap_batch(&self, batch: usize) -> Result<RewrapReport, StoreError> {
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
                .map_err(|e| StoreError::Corrupt(format!("grant {}: {e}", key.tag())))?;
            let mut next = row.clone();
            next.tokens_sealed =
                self.sealer
                    .seal_bytes(Purpose::StoredGrant, &key.binding(), &plain);
            next.key_id = current.clone();
            next.version = row.version + 1;
            if self
                .backend
                .compare_and_set(&key, row.version, &next)
                .await?
            {
                report.rewrapped += 1;
            } else {
                report.changed_meanwhile += 1;
            }
        }
        Ok(report)
    }

    /// Removes a grant found dead (the provider rejected it), unless it changed meanwhile.
    pub async fn delete_if_unchanged(
        &self,
        key: &GrantKey,
        version: i64,
    ) -> Result<bool, StoreError> {
        self.backend.delete_if_version(key, version).await
    }
}
