//! "A sign-in ended" on this replica: what waits on a person's sign-in without holding a
//! request (an MCP task) moves at once, rather than when its client next looks.
//!
//! Told only where the callback (or the key form) finished, after the flow's end is
//! recorded, so whoever listens reads the sign-in as ended. A listener that misses one still
//! sees the end at its next look.

use tokio::sync::broadcast;

use crate::identity::Principal;

/// How many ends may wait for a slow listener before the oldest are dropped.
const BACKLOG: usize = 256;

/// Tells this process's listeners whose sign-in ended.
#[derive(Clone)]
pub(crate) struct SignInsEnded(broadcast::Sender<Principal>);

impl SignInsEnded {
    pub(crate) fn new() -> Self {
        Self(broadcast::channel(BACKLOG).0)
    }

    /// `principal`'s sign-in ended here (connected or refused).
    pub(crate) fn tell(&self, principal: &Principal) {
        // No listener is fine: nothing waits.
        let _ = self.0.send(principal.clone());
    }

    /// The ends told from now on.
    pub(crate) fn listen(&self) -> broadcast::Receiver<Principal> {
        self.0.subscribe()
    }
}

impl Default for SignInsEnded {
    fn default() -> Self {
        Self::new()
    }
}
