//! Leases: short exclusive locks shared by every replica through the store, for work that
//! must happen once (refreshing a grant whose provider rotates refresh tokens), or for a mark
//! that something happened once (a login transaction used). A lease expires on its own, so a
//! replica that dies holding one blocks the others only until then.

pub(crate) mod redis;
pub(crate) mod sql;

use async_trait::async_trait;

use crate::store::StoreError;

#[async_trait]
pub trait LeaseBackend: Send + Sync {
    /// Takes the lease `name` for `holder` for `ttl_ms`, unless someone else holds it
    /// unexpired; tells whether it did.
    async fn try_acquire(&self, name: &str, holder: &str, ttl_ms: i64) -> Result<bool, StoreError>;
    /// Gives the lease back, if `holder` still holds it.
    async fn release(&self, name: &str, holder: &str) -> Result<(), StoreError>;
    /// Whether anyone holds `name`, unexpired (a mark: whether it was made).
    async fn is_held(&self, name: &str) -> Result<bool, StoreError>;
    /// Removes leases that have lapsed (some are never given back: a used login's); returns
    /// how many. Stores that expire keys by themselves remove none.
    async fn delete_expired(&self) -> Result<u64, StoreError>;
}
