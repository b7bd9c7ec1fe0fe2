//! The sign-in ticket: the sealed value in a connect link.
//!
//! Opaque to everyone but grantry: a 128-bit random id, the principal it was issued to, the
//! provider, what the connection is for (reading, or writing too), how the link reached the
//! person (what the "connected" page tells them to do next) and an expiry, sealed under
//! purpose "sign-in ticket". It holds nothing readable, and it is useless on its own: the
//! connect page still checks who is at the browser.

use crate::config::PublicUrl;
use serde::{Deserialize, Serialize};

use crate::access::Access;
use crate::flows::Handout;
use crate::identity::Principal;
use crate::leases::LeaseBackend;
use crate::providers::ProviderId;
use crate::seal::{OpenError, Purpose, Sealer, random_id};
use crate::store::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticket {
    pub(crate) id: String,
    pub(crate) principal: Principal,
    pub(crate) provider: ProviderId,
    /// What the call that asked for the sign-in does: its provider scopes are asked for.
    #[serde(default, rename = "a")]
    pub(crate) access: Access,
    /// How its link reached the person; a ticket sealed before this field was added says
    /// nothing ([`Handout::Unsaid`]).
    #[serde(default, rename = "h")]
    pub(crate) handout: Handout,
}

impl Ticket {
    /// A ticket for a connection that reads, its link handed out as `handout` says.
    pub fn new(principal: &Principal, provider: &ProviderId, handout: Handout) -> Self {
        Self::for_access(principal, provider, Access::Read, handout)
    }

    /// A ticket for a connection that serves calls with `access`, its link handed out as
    /// `handout` says.
    pub(crate) fn for_access(
        principal: &Principal,
        provider: &ProviderId,
        access: Access,
        handout: Handout,
    ) -> Self {
        Self {
            id: random_id(),
            principal: principal.clone(),
            provider: provider.clone(),
            access,
            handout,
        }
    }

    pub fn seal(&self, sealer: &Sealer, now: i64, ttl_secs: i64) -> String {
        sealer.seal_timed(Purpose::SignInTicket, b"", self, now, ttl_secs)
    }

    pub fn open(sealer: &Sealer, sealed: &str, now: i64) -> Result<Self, OpenError> {
        sealer.open_timed(Purpose::SignInTicket, b"", sealed, now)
    }
}

/// The store's mark that a ticket's link was opened (a browser reached the connect page):
/// what tells a client that never showed the link from a person still signing in.
fn opened_mark(ticket_id: &str) -> String {
    format!("ticket-opened:{ticket_id}")
}

impl Ticket {
    /// Marks this ticket's link opened, for as long as a link lives (`ttl_secs`). A mark that
    /// cannot be written is logged: the page goes on, and a retry only answers sooner.
    pub(crate) async fn mark_opened(&self, leases: &dyn LeaseBackend, ttl_secs: i64) {
        let mark = opened_mark(&self.id);
        if let Err(e) = leases.try_acquire(&mark, "page", ttl_secs * 1000).await {
            tracing::warn!(error = %e, "cannot mark a connect link opened");
        }
    }
}

/// Whether the link of ticket `ticket_id` was opened.
pub(crate) async fn was_opened(
    leases: &dyn LeaseBackend,
    ticket_id: &str,
) -> Result<bool, StoreError> {
    leases.is_held(&opened_mark(ticket_id)).await
}

/// The connect link for a sealed ticket.
pub fn link(public_url: &PublicUrl, sealed_ticket: &str) -> String {
    format!("{public_url}/connect/{sealed_ticket}")
}
