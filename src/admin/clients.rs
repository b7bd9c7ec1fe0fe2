//! `grantry clients`: refusing one MCP client the use of connections, and taking that back.
//! A block names the client id access tokens are issued to (`azp` / `client_id`); every
//! replica refuses the client's tool calls within [`crate::blocklist::REREAD_EVERY`], and no
//! connection changes.

use serde::Serialize;

use super::{Admin, AdminError};
use crate::blocklist::Blocked;
use crate::outbox::rfc3339;

/// One blocked client, for an operator.
#[derive(Debug, Clone, Serialize)]
pub struct BlockedView {
    pub client_id: String,
    pub blocked_at: String,
}

impl From<Blocked> for BlockedView {
    fn from(blocked: Blocked) -> Self {
        Self {
            client_id: blocked.client_id,
            blocked_at: rfc3339(blocked.blocked_at),
        }
    }
}

impl Admin {
    /// Blocks `client_id`; tells whether it was not blocked already.
    pub async fn block(&self, client_id: &str) -> Result<bool, AdminError> {
        let now = grantry_base::clock::unix_now();
        Ok(self.blocklist.block(client_id, now).await?)
    }

    /// Unblocks `client_id`; a client that is not blocked is [`AdminError::NotBlocked`].
    pub async fn unblock(&self, client_id: &str) -> Result<(), AdminError> {
        if self.blocklist.unblock(client_id).await? {
            Ok(())
        } else {
            Err(AdminError::NotBlocked(client_id.to_owned()))
        }
    }

    /// Every blocked client.
    pub async fn blocked(&self) -> Result<Vec<BlockedView>, AdminError> {
        Ok(self
            .blocklist
            .list()
            .await?
            .into_iter()
            .map(BlockedView::from)
            .collect())
    }
}
