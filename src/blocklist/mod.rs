//! The MCP clients an operator refused the use of connections to (`grantry clients block`),
//! by the client id their access tokens are issued to. Kept in the store, so every replica
//! refuses the same clients; each replica re-reads the list at most every few seconds.
//! Blocking changes no connection: the person's grants stay, usable through other clients.

pub(crate) mod redis;
pub(crate) mod sql;

use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::store::StoreError;

/// How stale a replica's copy of the list may be.
pub(crate) const REREAD_EVERY: Duration = Duration::from_secs(5);

/// One blocked client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Blocked {
    pub(crate) client_id: String,
    /// When it was blocked (Unix seconds).
    pub(crate) blocked_at: i64,
}

/// Storage for the list; one implementation per backend.
#[async_trait]
pub(crate) trait BlocklistBackend: Send + Sync {
    /// Adds `client_id`, blocked `at`; tells whether it was not already there.
    async fn block(&self, client_id: &str, at: i64) -> Result<bool, StoreError>;
    /// Removes `client_id`; tells whether it was there.
    async fn unblock(&self, client_id: &str) -> Result<bool, StoreError>;
    /// Every blocked client, by id.
    async fn list(&self) -> Result<Vec<Blocked>, StoreError>;
}

/// The list as a replica sees it: the store's, copied at most [`REREAD_EVERY`] ago.
pub(crate) struct Blocklist {
    backend: Arc<dyn BlocklistBackend>,
    copy: RwLock<Option<Copy>>,
}

struct Copy {
    read_at: Instant,
    ids: Arc<HashSet<String>>,
}

impl Blocklist {
    pub(crate) fn new(backend: Arc<dyn BlocklistBackend>) -> Self {
        Self {
            backend,
            copy: RwLock::new(None),
        }
    }

    /// Whether `client_id` is blocked (as of at most [`REREAD_EVERY`] ago).
    pub(crate) async fn is_blocked(&self, client_id: &str) -> Result<bool, StoreError> {
        let ids = match self.fresh_copy() {
            Some(ids) => ids,
            None => self.reread().await?,
        };
        Ok(ids.contains(client_id))
    }

    fn fresh_copy(&self) -> Option<Arc<HashSet<String>>> {
        let copy = self.copy.read().expect("blocklist lock is never poisoned");
        copy.as_ref()
            .filter(|c| c.read_at.elapsed() < REREAD_EVERY)
            .map(|c| c.ids.clone())
    }

    async fn reread(&self) -> Result<Arc<HashSet<String>>, StoreError> {
        let read_at = Instant::now();
        let ids: Arc<HashSet<String>> = Arc::new(
            self.backend
                .list()
                .await?
                .into_iter()
                .map(|b| b.client_id)
                .collect(),
        );
        let mut copy = self.copy.write().expect("blocklist lock is never poisoned");
        *copy = Some(Copy {
            read_at,
            ids: ids.clone(),
        });
        Ok(ids)
    }
}
