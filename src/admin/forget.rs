//! `grantry users forget`: erasing a person. Their connections are revoked first (as
//! `connections revoke` does), then everything else of theirs is removed: sign-in attempts,
//! legacy-era sessions, rate counters, and every webhook delivery about them, the events just
//! written by the revocations included (they name the person).

use serde::Serialize;

use super::{Admin, AdminError, Listed, Outcome, Revoked, describe};
use crate::identity::Principal;

/// Rounds of revocation before giving up on a connection that keeps changing (a refresh or a
/// reconnection under way).
const ROUNDS: usize = 3;

/// What erasing a person removed.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Forgotten {
    pub(crate) connections: Vec<Revoked>,
    pub(crate) sign_in_attempts: u64,
    pub(crate) legacy_sessions: u64,
    pub(crate) rate_counters: u64,
    pub(crate) webhook_deliveries: u64,
    /// MCP tasks the person made.
    pub(crate) tasks: u64,
}

impl Forgotten {
    /// Whether anything of the person was found.
    pub(crate) fn found_anything(&self) -> bool {
        !self.connections.is_empty()
            || self.sign_in_attempts + self.legacy_sessions + self.rate_counters > 0
            || self.webhook_deliveries + self.tasks > 0
    }
}

impl Admin {
    /// Erases `user`; a person of whom nothing was found is [`AdminError::UnknownUser`]
    /// (nothing changed).
    pub(crate) async fn forget(&self, user: &Principal) -> Result<Forgotten, AdminError> {
        // Sign-in attempts first: one still pending could otherwise store a grant after the
        // revocations.
        let sign_in_attempts = self.flows.forget(user).await?;
        let mut forgotten = Forgotten {
            connections: self.revoke_all(user).await?,
            sign_in_attempts,
            ..Forgotten::default()
        };
        forgotten.legacy_sessions = self.sessions.forget(&user.tag()).await?;
        let (counter, window) = crate::limits::principal_counter(user);
        forgotten.rate_counters = self.counters.forget(&counter, window).await?;
        forgotten.webhook_deliveries = self.outbox.forget(user).await?;
        forgotten.tasks = self.tasks.forget(user).await?;
        if !forgotten.found_anything() {
            return Err(AdminError::UnknownUser(describe(user)));
        }
        Ok(forgotten)
    }

    /// Revokes every connection of `user`, again while some remain (one reconnected or
    /// refreshed meanwhile), for up to [`ROUNDS`] rounds; what became of each. One still there
    /// after the last round is reported kept.
    async fn revoke_all(&self, user: &Principal) -> Result<Vec<Revoked>, AdminError> {
        let mut report: Vec<Revoked> = Vec::new();
        for round in 0..=ROUNDS {
            let left = self.connections.grants().all(Some(user)).await?;
            if left.is_empty() {
                break;
            }
            let done = if round == ROUNDS {
                left.iter()
                    .map(|(key, found)| Revoked {
                        connection: Listed::of(key, found),
                        outcome: Outcome::Kept,
                    })
                    .collect()
            } else {
                self.revoke(super::revoke::Plan(left)).await?
            };
            // A connection tried again replaces what an earlier round said of it.
            for each in done {
                let id = &each.connection.connection_id;
                report.retain(|r| &r.connection.connection_id != id);
                report.push(each);
            }
        }
        Ok(report)
    }
}
