//! Legacy-era MCP sessions (2025-11-25, opened by `initialize`), kept in the store so that
//! any replica serves any request of a session. A session belongs to the principal who
//! opened it; its record holds that principal's tag and the client's `initialize`
//! parameters (to replay the handshake on a replica that has not seen it). Records expire
//! on their own; each use by the owner pushes the expiry on. A principal keeps a bounded
//! number of them: a new one past the cap forgets that principal's least recently used.

pub(crate) mod redis;
pub(crate) mod sql;

use async_trait::async_trait;

use crate::store::StoreError;

/// One stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionRecord {
    /// The opener's [`crate::identity::Principal::tag`].
    pub owner: String,
    /// The client's `initialize` params, as JSON.
    pub initialize: String,
}

/// What [`SessionBackend::create`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// Stored. `forgotten`: the owner's sessions removed to keep within the cap, least
    /// recently used first.
    Stored { forgotten: Vec<String> },
    /// An unexpired session already has that id: nothing was written.
    Taken,
}

#[async_trait]
pub(crate) trait SessionBackend: Send + Sync {
    /// Stores the new session `id` for `ttl_ms`, then forgets the owner's least recently
    /// used sessions (never `id`) until it keeps at most `keep`.
    async fn create(
        &self,
        id: &str,
        record: &SessionRecord,
        ttl_ms: i64,
        keep: usize,
    ) -> Result<Created, StoreError>;
    /// The unexpired session `id`.
    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// Pushes the expiry of session `id` to `ttl_ms` from now if it is unexpired and
    /// `owner`'s; tells whether it was (anyone else's use changes nothing).
    async fn touch(&self, id: &str, owner: &str, ttl_ms: i64) -> Result<bool, StoreError>;
    /// Removes the expired sessions (where the store does not on its own); how many.
    async fn delete_expired(&self) -> Result<u64, StoreError>;
    /// Ends the session `id` (nothing if there is none).
    async fn delete(&self, id: &str) -> Result<(), StoreError>;
    /// Ends every session of `owner`, expired or not; says how many.
    async fn forget(&self, owner: &str) -> Result<u64, StoreError>;
}
