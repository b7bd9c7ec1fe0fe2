//! A missing connection, the legacy way: `-32042` with the connect link, then
//! `notifications/elicitation/complete` to the session once the sign-in lands.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CustomNotification, ServerNotification};
use rmcp::service::Peer;
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::grants::GrantKey;
use crate::identity::Principal;
use crate::mcp_calls::rounds::Rounds;
use crate::mcp_calls::rounds::sign_in::{self, SignInEnd, UrlElicitation};
use crate::mcp_wire::jsonrpc::{ErrorCode, RpcError};
use crate::state::AppState;

/// The legacy answer for a missing connection: `-32042` with the connect link.
pub(crate) fn url_elicitation_required(elicitation: &UrlElicitation) -> RpcError {
    // The link in the message too: most client libraries show a model or a person the
    // message alone, never `data`.
    RpcError::new(
        ErrorCode::URL_ELICITATION_REQUIRED,
        format!(
            "This request needs a connected account: open {} to connect it, then retry",
            elicitation.url
        ),
    )
    .with_data(json!({"elicitations": [{
        "mode": "url",
        "elicitationId": elicitation.elicitation_id,
        "url": elicitation.url,
        "message": elicitation.message,
    }]}))
}

/// Bounds the waits for a sign-in to land ([`notify_when_connected`]): in all, and per
/// caller, so that one caller's retries cannot use up everyone's.
pub(crate) struct CompletionNotices {
    total: Arc<Semaphore>,
    per_caller: Mutex<HashMap<String, usize>>,
}

/// Waits one caller may have at once.
const NOTICES_PER_CALLER: usize = 8;

/// One wait's place; given back when dropped.
struct NoticeSlot {
    notices: Arc<CompletionNotices>,
    caller: String,
    _permit: OwnedSemaphorePermit,
}

impl CompletionNotices {
    pub(crate) fn new(total: usize) -> Arc<Self> {
        Arc::new(Self {
            total: Arc::new(Semaphore::new(total)),
            per_caller: Mutex::new(HashMap::new()),
        })
    }

    fn take(self: &Arc<Self>, caller: String) -> Option<NoticeSlot> {
        let permit = self.total.clone().try_acquire_owned().ok()?;
        let mut counts = self.per_caller.lock().expect("never poisoned");
        let count = counts.entry(caller.clone()).or_default();
        if *count >= NOTICES_PER_CALLER {
            return None;
        }
        *count += 1;
        Some(NoticeSlot {
            notices: self.clone(),
            caller,
            _permit: permit,
        })
    }
}

impl Drop for NoticeSlot {
    fn drop(&mut self) {
        let mut counts = self.notices.per_caller.lock().expect("never poisoned");
        if let Some(count) = counts.get_mut(&self.caller) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.caller);
            }
        }
    }
}

/// Sends `notifications/elicitation/complete` to the session once `principal` has connected
/// `elicitation.provider`, waiting at most as long as its link lives. Past the bounds of
/// `notices`, the client simply learns by retrying.
pub(crate) fn notify_when_connected(
    state: AppState,
    notices: &Arc<CompletionNotices>,
    principal: Principal,
    elicitation: &UrlElicitation,
    peer: Peer<RoleServer>,
) {
    let Some(slot) = notices.take(principal.tag().into()) else {
        return;
    };
    // As long as the link stays valid.
    let until = Duration::from_secs(state.config.request_state_ttl_secs.max(0) as u64);
    let key = GrantKey::sole(&principal, &elicitation.provider);
    let elicitation_id = elicitation.elicitation_id.clone();
    let elicitation = (elicitation_id.clone(), elicitation.access);
    tokio::spawn(async move {
        let _slot = slot;
        let deadline = tokio::time::Instant::now() + until;
        loop {
            // Subscribe before reading, so a grant landing in between still wakes us.
            let mut waiter = state.connections.landed().subscribe();
            let (ticket_id, access) = (&elicitation.0, elicitation.1);
            if sign_in::ended(&Rounds::lent_by(&state), &key, ticket_id, access).await
                == Some(SignInEnd::Connected)
            {
                let notice = CustomNotification::new(
                    "notifications/elicitation/complete",
                    Some(json!({"elicitationId": elicitation_id})),
                );
                if let Err(e) = peer
                    .send_notification(ServerNotification::CustomNotification(notice))
                    .await
                {
                    tracing::debug!(error = %e, "elicitation/complete not delivered");
                }
                return;
            }
            if peer.is_transport_closed() {
                return;
            }
            tokio::select! {
                _ = waiter.changed(&key) => {}
                _ = tokio::time::sleep(state.config.hold_poll_interval) => {}
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    });
}
