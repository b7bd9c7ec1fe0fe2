//! "A grant landed" events, so a retry held open wakes as soon as the callback stores a grant.
//!
//! In one process (the SQLite deployment) this is a broadcast channel; a waiter that misses an
//! event still re-reads the store on a short poll, so a lost event delays a retry, never hangs it.

use tokio::sync::broadcast;

use super::GrantKey;

#[derive(Clone)]
pub struct GrantEvents {
    sender: broadcast::Sender<String>,
}

impl Default for GrantEvents {
    fn default() -> Self {
        Self::new()
    }
}

impl GrantEvents {
    pub fn new() -> Self {
        let (sender, _) = broadcast::channel(256);
        Self { sender }
    }

    /// Announces that the grant under `key` changed.
    pub fn notify(&self, key: &GrantKey) {
        // No receiver is fine: nobody is waiting.
        let _ = self.sender.send(key.tag());
    }

    /// Starts listening; subscribe before reading the store so no event slips between.
    pub fn subscribe(&self) -> GrantWaiter {
        GrantWaiter {
            receiver: self.sender.subscribe(),
        }
    }
}

pub struct GrantWaiter {
    receiver: broadcast::Receiver<String>,
}

impl GrantWaiter {
    /// Waits until an event for `key` arrives (or events were dropped, which may hide one).
    pub async fn changed(&mut self, key: &GrantKey) {
        let tag = key.tag();
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
