//! Legacy-era MCP sessions (2025-11-25, opened by `initialize`), kept in the store so that
//! any replica serves any request of a session. A session belongs to the principal who
//! opened it; its record holds that principal's tag and the client's `initialize`
//! parameters (to replay the handshake on a replica that has not seen it). Records expire
//! on their own; each use pushes the expiry on.

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
    /// Stores (or replaces) the session `id` for `ttl_ms`.
    async fn put(&self, id: &str, record: &SessionRecord, ttl_ms: i64) -> Result<(), StoreError>;
    /// The unexpired session `id`, its expiry pushed to `ttl_ms` from now.
    async fn touch(&self, id: &str, ttl_ms: i64) -> Result<Option<SessionRecord>, StoreError>;
    /// Ends the session `id` (nothing if there is none).
    async fn delete(&self, id: &str) -> Result<(), StoreError>;
}
