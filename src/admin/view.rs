//! A connection as `grantry connections list` shows it: who, where, which account, in what
//! state, since when. No token, and nothing sealed.

use serde::Serialize;

use crate::grants::{Found, GrantKey, GrantRow};
use crate::identity::{ClientView, McpClient};
use crate::ids::ConnectionId;
use crate::outbox::rfc3339;

/// One connection, for an operator.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Listed {
    pub(crate) connection_id: ConnectionId,
    pub(crate) issuer: String,
    pub(crate) subject: String,
    pub(crate) provider: String,
    /// The provider's id and name of the account (none at providers without accounts).
    pub(crate) account: Option<AccountView>,
    /// `active`, `refresh_failing` or `needs_reauth`; `unreadable` for a row whose tokens do
    /// not open (sealed under a key no longer in the ring).
    pub(crate) state: &'static str,
    /// Why the state is not `active`.
    pub(crate) reason: Option<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) connected_at: String,
    /// When a tool last used it (none: not since uses were recorded).
    pub(crate) last_used_at: Option<String>,
    /// The MCP client it was last used through (`verified`: the client its access token was
    /// issued to; else only the name the client gave itself).
    pub(crate) last_used_by: Option<ClientView>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AccountView {
    pub(crate) id: String,
    pub(crate) name: String,
}

impl Listed {
    pub(super) fn of(key: &GrantKey, found: &Found) -> Self {
        match found {
            Found::Opened(grant) => Self {
                connection_id: grant.connection_id.clone(),
                issuer: key.principal.issuer.clone(),
                subject: key.principal.subject.clone(),
                provider: key.provider.to_string(),
                account: grant.tokens.account.as_ref().map(|a| AccountView {
                    id: a.id.as_str().to_owned(),
                    name: a.name.clone(),
                }),
                state: grant.state.as_str(),
                reason: grant.health.reason.clone(),
                scopes: grant.tokens.scopes.clone(),
                connected_at: rfc3339(grant.created_at),
                last_used_at: (grant.used_at > 0).then(|| rfc3339(grant.used_at)),
                last_used_by: grant.used_by.as_ref().map(McpClient::view),
            },
            Found::Unreadable(row) => Self::unreadable(key, row),
        }
    }

    /// What a row whose tokens do not open still says.
    fn unreadable(key: &GrantKey, row: &GrantRow) -> Self {
        Self {
            connection_id: crate::grants::connection_id(key, &row.connection_id),
            issuer: key.principal.issuer.clone(),
            subject: key.principal.subject.clone(),
            provider: key.provider.to_string(),
            account: key.account.as_ref().map(|id| AccountView {
                id: id.as_str().to_owned(),
                name: String::new(),
            }),
            state: "unreadable",
            reason: Some("its tokens do not open with the keys in the ring".into()),
            scopes: row.scopes.split_whitespace().map(str::to_owned).collect(),
            connected_at: rfc3339(row.created_at),
            last_used_at: (row.used_at > 0).then(|| rfc3339(row.used_at)),
            last_used_by: McpClient::from_stored(&row.used_by)
                .as_ref()
                .map(McpClient::view),
        }
    }
}
