//! Tasks waiting on a sign-in: stepped as soon as one of their person's sign-ins ends on this
//! replica, and, for a host that renders the connect card and shows no link, told which
//! provider the card is to connect.

use std::sync::Weak;

use tokio::sync::broadcast;

use crate::identity::Principal;
use crate::mcp_calls::rounds::request_state::{ArgumentsDigest, StateClaims, ToolRequest};
use crate::mcp_calls::tasks_extension::work::Work;
use crate::mcp_calls::tasks_extension::{Change, STEPPED_ON_SIGN_IN, Tasks, checked_when_moved};
use crate::providers::ProviderId;
use grantry_base::clock::{unix_now, unix_now_millis};

impl Tasks {
    /// Steps, as each sign-in ends on this replica, its person's tasks waiting on one: a
    /// task completes when its grant lands, not at its client's next poll. Holds the
    /// service weakly, so it ends with the state it was built from.
    pub(super) async fn follow_sign_ins(
        tasks: Weak<Self>,
        mut ended: broadcast::Receiver<Principal>,
    ) {
        loop {
            match ended.recv().await {
                Ok(principal) => {
                    let Some(tasks) = tasks.upgrade() else {
                        return;
                    };
                    tokio::spawn(async move { tasks.step_open(&principal).await });
                }
                // Those missed step at their next poll.
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// Looks, for each of `owner`'s tasks waiting on a sign-in, whether it ended.
    async fn step_open(&self, owner: &Principal) {
        let open = self
            .state
            .tasks
            .open_of(owner, unix_now_millis(), STEPPED_ON_SIGN_IN)
            .await;
        let open = match open {
            Ok(open) => open,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the tasks waiting on a sign-in");
                return;
            }
        };
        for task in open {
            let look = self.change(owner, &task.id_hash, &Change::Look, &checked_when_moved);
            if let Err(e) = look.await {
                tracing::warn!(
                    error = e.describe(),
                    "a task waiting on a sign-in did not step"
                );
            }
        }
    }

    /// For a host that renders the connect card and shows no link, the provider of the
    /// sign-in the work's round waits on (read from the round's own state).
    pub(super) fn card_provider(&self, owner: &Principal, work: &Work) -> Option<ProviderId> {
        let card_host = work.capabilities.apps && !work.capabilities.url_elicitation;
        if !card_host || !work.waits_on_sign_in() {
            return None;
        }
        let request = ToolRequest {
            principal: owner,
            tool: &work.tool,
            arguments: ArgumentsDigest::of_wire(&work.arguments),
        };
        let sealed = work.round_state()?;
        StateClaims::open(&self.state.sealer, sealed, unix_now(), request)
            .ok()
            .map(|claims| claims.provider)
    }
}
