//! Legacy-era MCP sessions (2025-11-25, opened by `initialize`), kept in the store so that
//! any replica serves any request of a session. A session belongs to the principal who
//! opened it; its record holds that principal's tag and the client's `initialize`
//! parameters (to replay the handshake on a replica that has not seen it). Records expire
//! on their own; each use by the owner pushes the expiry on.

pub mod redis;
pub mod sql;

use async_trait::async_trait;

use crate::store::StoreError;

/// One stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// The opener's [`crate::identity::Principal::tag`].
    pub owner: String,
    /// The client's `initialize` params, as JSON.
    pub initialize: String,
}

#[async_trait]
pub trait SessionBackend: Send + Sync {
    /// Stores the new session `id` for `ttl_ms`; `false` (and nothing written) when an
    /// unexpired session already has that id.
    async fn create(
        &self,
        id: &str,
        record: &SessionRecord,
        ttl_ms: i64,
    ) -> Result<bool, StoreError>;
    /// The unexpired session `id`.
    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// Pushes the expiry of session `id` to `ttl_ms` from now if it is unexpired and
    /// `owner`'s; tells whether it was (anyone else's use changes nothing).
    async fn touch(&self, id: &str, owner: &str, ttl_ms: i64) -> Result<bool, StoreError>;
    /// Removes the expired sessions (where the store does not on its own); how many.
    async fn delete_expired(&self) -> Result<u64, StoreError>;
    /// Ends the session `id` (nothing if there is none).
    async fn delete(&self, id: &str) -> Result<(), StoreError>;
}
