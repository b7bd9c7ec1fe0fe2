//! What a lifecycle event is: its kind, and what its data says about the connection (never a
//! token).

use serde_json::{Value, json};

use crate::grants::{GrantKey, Health, State};
use crate::identity::McpClient;
use crate::ids::ConnectionId;
use crate::outbox::rfc3339;
use crate::providers::oauth::TokenSet;

/// The lifecycle events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    Created,
    Reconnected,
    RefreshFailed,
    Recovered,
    NeedsReauth,
    Expiring,
    Disconnected,
    /// A sign-in over an existing connection changed what it may do (incremental consent).
    ScopesChanged,
}

impl EventKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Created => "connection.created",
            Self::Reconnected => "connection.reconnected",
            Self::RefreshFailed => "connection.refresh_failed",
            Self::Recovered => "connection.recovered",
            Self::NeedsReauth => "connection.needs_reauth",
            Self::Expiring => "connection.expiring",
            Self::Disconnected => "connection.disconnected",
            Self::ScopesChanged => "connection.scopes_changed",
        }
    }
}

/// What every event says about its connection, and the MCP client it was last used through.
pub(super) fn event_data(
    key: &GrantKey,
    connection_id: &ConnectionId,
    tokens: &TokenSet,
    (state, health): (State, &Health),
    used_by: Option<&McpClient>,
) -> Value {
    json!({
        "connection_id": connection_id,
        "provider": key.provider,
        "principal": {"iss": key.principal.issuer, "sub": key.principal.subject},
        "account": tokens.account.as_ref().map(|a| json!({"id": a.id, "name": a.name})),
        "state": state.as_str(),
        "scopes": tokens.scopes,
        "reason": health.reason,
        "attempt_count": health.failures,
        "hard_expires_at": health.hard_expires_at.map(rfc3339),
        "last_used_by": used_by.map(McpClient::view),
    })
}
