//! `list_connections`: which billing accounts the caller has connected. Read-only, and never
//! a token: each connection's id, provider, account, scopes, health state (and why), since
//! when, its last refresh and use, and its hard expiry where the provider has one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Call, ToolError, ToolOutcome, ToolResult, ToolSpec, schema};
use crate::connections;
use crate::grants::State;
use crate::ids::{AccountId, ConnectionId, ProviderId};
use crate::outbox::rfc3339;

pub(crate) const NAME: &str = "list_connections";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "List connected accounts",
        description: "List the billing accounts the user has connected: provider, account, \
                      scopes, whether each still works (state: active, refresh_failing, \
                      needs_reauth, and why), since when, last refresh and use, and any hard \
                      expiry; and the page (manage_at) where the user can see, reconnect and \
                      disconnect them. Never shows a credential.",
        input_schema: schema::input::<Args>(),
        output_schema: Some(schema::output::<Listed>()),
        annotations: json!({
            "title": "List connected accounts",
            "readOnlyHint": true,
            "idempotentHint": true,
            "openWorldHint": false
        }),
    }
}

/// The arguments: none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {}

/// What a call returns.
#[derive(Serialize, JsonSchema)]
struct Listed {
    connections: Vec<Listing>,
    /// The page where the user sees, reconnects and disconnects these connections.
    #[schemars(extend("format" = "uri"))]
    manage_at: String,
}

/// One connection; never its credentials.
#[derive(Serialize, JsonSchema)]
struct Listing {
    connection_id: ConnectionId,
    /// The provider's id.
    provider: ProviderId,
    /// The provider's name, as people know it.
    provider_name: String,
    /// The account's name at the provider (pass it, or account_id, as a tool's `account`).
    account: Option<String>,
    /// The provider's id of the account.
    account_id: Option<AccountId>,
    /// Whether it works: active, refresh_failing (tried again later) or needs_reauth (the
    /// user must reconnect).
    state: State,
    /// Why it does not work, when it does not.
    reason: Option<String>,
    scopes: Vec<String>,
    #[schemars(extend("format" = "date-time"))]
    connected_since: String,
    #[schemars(extend("format" = "date-time"))]
    last_refreshed: Option<String>,
    #[schemars(extend("format" = "date-time"))]
    last_used: Option<String>,
    /// When the provider ends the grant whatever grantry does, where it does.
    #[schemars(extend("format" = "date-time"))]
    expires_at: Option<String>,
}

impl Listing {
    fn of(
        connections::Connection {
            provider, grant, ..
        }: connections::Connection<'_>,
    ) -> Self {
        let when = |at: i64| (at > 0).then(|| rfc3339(at));
        Self {
            connection_id: grant.connection_id,
            provider: provider.id.clone(),
            provider_name: provider.display_name.clone(),
            account_id: grant.tokens.account.as_ref().map(|a| a.id.clone()),
            account: grant.tokens.account.map(|a| a.name),
            state: grant.state,
            reason: grant.health.reason,
            scopes: grant.tokens.scopes,
            connected_since: rfc3339(grant.created_at),
            last_refreshed: when(grant.health.refreshed_at),
            last_used: when(grant.used_at),
            expires_at: grant.health.hard_expires_at.map(rfc3339),
        }
    }
}

pub(crate) async fn run(call: &Call<'_>, Args {}: &Args) -> Result<ToolOutcome, ToolError> {
    let connections = call
        .services
        .connections
        .connected(call.principal)
        .await?
        .into_iter()
        .map(Listing::of)
        .collect();
    let manage_at = format!(
        "{}{}",
        call.services.public_url,
        crate::identity::oidc::CONNECTIONS_PATH
    );
    Ok(ToolOutcome::Done(ToolResult::structured_from(&Listed {
        connections,
        manage_at,
    })))
}
