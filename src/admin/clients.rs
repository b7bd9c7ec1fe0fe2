//! `grantry clients`: refusing one MCP client the use of connections, and taking that back.
//! A block names the client id access tokens are issued to (`azp` / `client_id`); every
//! replica refuses the client's tool calls within [`crate::blocklist::REREAD_EVERY`], and no
//! connection changes. A name a client only declared (`clientInfo.name`) is never matched:
//! [`Admin::seen_as`] tells the command so it can warn.

use serde::Serialize;

use super::{Admin, AdminError, Filter};
use crate::blocklist::Blocked;
use crate::identity::ClientView;
use crate::outbox::rfc3339;

/// One blocked client, for an operator.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BlockedView {
    pub(crate) client_id: String,
    pub(crate) blocked_at: String,
}

impl From<Blocked> for BlockedView {
    fn from(blocked: Blocked) -> Self {
        Self {
            client_id: blocked.client_id,
            blocked_at: rfc3339(blocked.blocked_at),
        }
    }
}

/// What blocking a client id would refuse, as `clients block` checks it first: a block
/// matches verified client ids only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SeenAs {
    /// Some connection was last used through a client the issuer vouched for with this id.
    Verified,
    /// No connection was last used through it (a client not seen yet can still be blocked).
    Unseen,
    /// Only as a name a client gave itself: blocking it refuses nobody.
    DeclaredOnly,
    /// This grantry verifies no client (`dev` identity): every block refuses nobody.
    NoneVerified,
}

/// How the clients connections were last used through (`used_by`) name `client_id`.
fn seen_in<'a>(used_by: impl Iterator<Item = &'a ClientView>, client_id: &str) -> SeenAs {
    let mut seen = SeenAs::Unseen;
    for by in used_by.filter(|by| by.client == client_id) {
        if by.verified {
            return SeenAs::Verified;
        }
        seen = SeenAs::DeclaredOnly;
    }
    seen
}

impl Admin {
    /// What blocking `client_id` would refuse: see [`SeenAs`].
    pub(crate) async fn seen_as(&self, client_id: &str) -> Result<SeenAs, AdminError> {
        if !self.verifies_clients {
            return Ok(SeenAs::NoneVerified);
        }
        let listed = self.list(&Filter::default()).await?;
        let used_by = listed.iter().filter_map(|c| c.last_used_by.as_ref());
        Ok(seen_in(used_by, client_id))
    }

    /// Blocks `client_id`; tells whether it was not blocked already.
    pub(crate) async fn block(&self, client_id: &str) -> Result<bool, AdminError> {
        let now = grantry_base::clock::unix_now();
        Ok(self.blocklist.block(client_id, now).await?)
    }

    /// Unblocks `client_id`; a client that is not blocked is [`AdminError::NotBlocked`].
    pub(crate) async fn unblock(&self, client_id: &str) -> Result<(), AdminError> {
        if self.blocklist.unblock(client_id).await? {
            Ok(())
        } else {
            Err(AdminError::NotBlocked(client_id.to_owned()))
        }
    }

    /// Every blocked client.
    pub(crate) async fn blocked(&self) -> Result<Vec<BlockedView>, AdminError> {
        Ok(self
            .blocklist
            .list()
            .await?
            .into_iter()
            .map(BlockedView::from)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by(client: &str, verified: bool) -> ClientView {
        ClientView {
            client: client.into(),
            verified,
        }
    }

    #[test]
    fn a_name_only_ever_declared_is_told_apart_from_a_verified_id() {
        let used_by = [by("claude", false), by("app-1", true), by("app-1", false)];
        assert_eq!(seen_in(used_by.iter(), "claude"), SeenAs::DeclaredOnly);
        assert_eq!(seen_in(used_by.iter(), "app-1"), SeenAs::Verified);
        assert_eq!(seen_in(used_by.iter(), "app-2"), SeenAs::Unseen);
    }
}
