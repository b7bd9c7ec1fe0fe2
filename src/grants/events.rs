//! "A grant landed" events, so a retry held open wakes as soon as a callback stores a grant,
//! on this replica or another.
//!
//! Within a process this is a broadcast channel. With a shared store, every notice is also
//! published on the store's own bus (PostgreSQL `LISTEN/NOTIFY`, Redis pub/sub) and what
//! arrives from it is delivered here. A waiter that misses an event still re-reads the store
//! on a slow poll, so a lost event delays a retry, never hangs it.

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::broadcast;

use super::GrantKey;
use crate::store::StoreError;

/// Carries grant tags between replicas.
#[async_trait]
pub trait EventBus: Send + Sync {
    /// Tells every replica that the grant with `tag` changed.
    async fn publish(&self, tag: &str) -> Result<(), StoreError>;
    /// Starts delivering what other replicas publish into `events`, for as long as the
    /// process runs (reconnecting after failures).
    fn spawn_listener(&self, events: GrantEvents);
}

#[derive(Clone)]
pub struct GrantEvents {
    sender: broadcast::Sender<String>,
    bus: Option<Arc<dyn EventBus>>,
}

impl GrantEvents {
    /// Events for one process; with `bus`, for every replica on the same store.
    pub fn new(bus: Option<Arc<dyn EventBus>>) -> Self {
        let (sender, _) = broadcast::channel(256);
        let events = Self { sender, bus };
        if let Some(bus) = &events.bus {
            bus.spawn_listener(events.clone());
        }
        events
    }

    /// Announces that a grant of `key`'s principal at its provider changed, here and on every
    /// replica (waiters listen per (principal, provider): a sign-in's account is not known
    /// before it lands).
    pub(crate) async fn notify(&self, key: &GrantKey) {
        let tag = key.owner_tag();
        if let Some(bus) = &self.bus
            && let Err(e) = bus.publish(&tag).await
        {
            // Other replicas' waiters still find the grant on their next poll.
            tracing::warn!(error = %e, "could not publish a grant event");
        }
        self.deliver(tag);
    }

    /// Wakes this process's waiters for the grant with `tag`.
    pub(crate) fn deliver(&self, tag: String) {
        // No receiver is fine: nobody is waiting.
        let _ = self.sender.send(tag);
    }

    /// Starts listening; subscribe before reading the store so no event slips between.
    pub(crate) fn subscribe(&self) -> GrantWaiter {
        GrantWaiter {
            receiver: self.sender.subscribe(),
        }
    }
}
pub(crate) struct GrantWaiter {
    receiver: broadcast::Receiver<String>,
}

impl GrantWaiter {
    /// Waits until an event for `key`'s principal and provider arrives (or events were dropped,
    /// which may hide one).
    pub(crate) async fn changed(&mut self, key: &GrantKey) {
        let tag = key.owner_tag();
        loop {
            match self.receiver.recv().await {
                Ok(got) if got == tag => return,
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Lagged(_)) => return,
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            }
        }
    }
}
