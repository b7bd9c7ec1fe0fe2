//! The writes of a grant's row: each seals the tokens under the current key and carries the
//! events of its change into the outbox in the same store write (no change without its
//! event, no event without its change). Which change, and which events, the connections
//! service decides.

use super::health::{Health, State};
use super::{GrantKey, GrantRow, Grants};
use crate::identity::McpClient;
use crate::ids::ConnectionId;
use crate::outbox::Delivery;
use crate::providers::oauth::TokenSet;
use crate::store::StoreError;

/// A grant as a write leaves it.
pub(crate) struct Stored<'a> {
    pub(crate) tokens: &'a TokenSet,
    pub(crate) version: i64,
    /// When the connection was first made.
    pub(crate) created_at: i64,
    /// The last write of its tokens.
    pub(crate) updated_at: i64,
    pub(crate) connection_id: &'a ConnectionId,
    pub(crate) state: State,
    pub(crate) health: &'a Health,
    /// When the keep-alive next looks at it (0: never).
    pub(crate) keepalive_at: i64,
    /// When a tool last used it.
    pub(crate) used_at: i64,
}

impl Grants {
    /// The row of `key` as stored, its tokens sealed (what a sign-in over it keeps).
    pub(crate) async fn row(&self, key: &GrantKey) -> Result<Option<GrantRow>, StoreError> {
        self.backend.get(key).await
    }

    /// Inserts or replaces the row (a sign-in), with `events`.
    pub(crate) async fn put(
        &self,
        key: &GrantKey,
        stored: &Stored<'_>,
        events: &[Delivery],
    ) -> Result<(), StoreError> {
        let _span =
            crate::telemetry::store_span("grants put", self.backend.system(), "put", "grants");
        self.backend
            .upsert(key, &self.sealed(key, stored), events)
            .await
    }

    /// Replaces the row only if it still has `expected_version`, with `events`; tells
    /// whether it did.
    pub(crate) async fn replace(
        &self,
        key: &GrantKey,
        expected_version: i64,
        stored: &Stored<'_>,
        events: &[Delivery],
    ) -> Result<bool, StoreError> {
        let _span = crate::telemetry::store_span(
            "grants replace",
            self.backend.system(),
            "replace",
            "grants",
        );
        let row = self.sealed(key, stored);
        self.backend
            .compare_and_set(key, expected_version, &row, events)
            .await
    }

    /// Removes the row only if it still has `version`, with `events`; tells whether it did.
    pub(crate) async fn remove(
        &self,
        key: &GrantKey,
        version: i64,
        events: &[Delivery],
    ) -> Result<bool, StoreError> {
        let _span = crate::telemetry::store_span(
            "grants remove",
            self.backend.system(),
            "remove",
            "grants",
        );
        self.backend.delete_if_version(key, version, events).await
    }

    /// Records a use at `at` through `by`, in the background (no new version: no token or
    /// state changes).
    pub(crate) fn touch_in_background(&self, key: &GrantKey, at: i64, by: Option<&McpClient>) {
        let (backend, key) = (self.backend.clone(), key.clone());
        let by = by.map(McpClient::stored).unwrap_or_default();
        tokio::spawn(async move {
            if let Err(e) = backend.touch(&key, at, &by).await {
                tracing::debug!(error = %e, grant = %key.tag(), "recording a use failed");
            }
        });
    }

    fn sealed(&self, key: &GrantKey, stored: &Stored<'_>) -> GrantRow {
        let tokens = stored.tokens;
        GrantRow {
            tokens_sealed: self.seal_tokens(key, tokens),
            access_expires_at: tokens.expires_at,
            scopes: tokens.scopes.join(" "),
            version: stored.version,
            created_at: stored.created_at,
            updated_at: stored.updated_at,
            key_id: self.sealer.key_ring().current_key_id(),
            connection_id: stored.connection_id.to_string(),
            state: stored.state.as_str().into(),
            health: stored.health.to_json(),
            keepalive_at: stored.keepalive_at,
            used_at: stored.used_at,
            used_by: String::new(), // not written: see GrantRow::used_by
        }
    }
}
