//! The sign-in ticket: the sealed value in a connect link.
//!
//! Opaque to everyone but grantry: a 128-bit random id, the principal it was issued to, the
//! provider and an expiry, sealed under purpose "sign-in ticket". It holds nothing readable,
//! and it is useless on its own: the connect page still checks who is at the browser.

use crate::config::PublicUrl;
use serde::{Deserialize, Serialize};

use crate::identity::Principal;
use crate::providers::ProviderId;
use crate::seal::{OpenError, Purpose, Sealer, random_id};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticket {
    pub id: String,
    pub principal: Principal,
    pub provider: ProviderId,
}

impl Ticket {
    pub fn new(principal: &Principal, provider: &ProviderId) -> Self {
        Self {
            id: random_id(),
            principal: principal.clone(),
            provider: provider.clone(),
        }
    }

    pub fn seal(&self, sealer: &Sealer, now: i64, ttl_secs: i64) -> String {
        sealer.seal_timed(Purpose::SignInTicket, b"", self, now, ttl_secs)
    }

    pub fn open(sealer: &Sealer, sealed: &str, now: i64) -> Result<Self, OpenError> {
        sealer.open_timed(Purpose::SignInTicket, b"", sealed, now)
    }
}

/// The connect link for a sealed ticket.
pub fn link(public_url: &PublicUrl, sealed_ticket: &str) -> String {
    format!("{public_url}/connect/{sealed_ticket}")
}
