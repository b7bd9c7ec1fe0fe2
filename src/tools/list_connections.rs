//! `list_connections`: which billing accounts the caller has connected. Read-only, and never
//! a token: each connection's id, provider, account, scopes, health state (and why), since
//! when, its last refresh and use, and its hard expiry where the provider has one.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, ToolError, ToolOutcome, ToolResult, ToolSpec, args};
use crate::connections;
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
        input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        output_schema: Some(json!({
            "type": "object",
            "properties": {
                "connections": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "connection_id": {"type": "string"},
                            "provider": {"type": "string"},
                            "provider_name": {"type": "string"},
                            "account": {"type": ["string", "null"], "description": "The account's name at the provider (pass it, or account_id, as a tool's `account`)."},
                            "account_id": {"type": ["string", "null"], "description": "The provider's id of the account."},
                            "state": {"type": "string", "enum": ["active", "refresh_failing", "needs_reauth"]},
                            "reason": {"type": ["string", "null"]},
                            "scopes": {"type": "array", "items": {"type": "string"}},
                            "connected_since": {"type": "string", "format": "date-time"},
                            "last_refreshed": {"type": ["string", "null"], "format": "date-time"},
                            "last_used": {"type": ["string", "null"], "format": "date-time"},
                            "expires_at": {"type": ["string", "null"], "format": "date-time"}
                        },
                        "required": ["connection_id", "provider", "provider_name", "account", "account_id", "state", "reason", "scopes", "connected_since", "last_refreshed", "last_used", "expires_at"]
                    }
                },
                "manage_at": {"type": "string", "format": "uri",
                    "description": "The page where the user sees, reconnects and disconnects these connections."}
            },
            "required": ["connections", "manage_at"]
        })),
        annotations: json!({
            "title": "List connected accounts",
            "readOnlyHint": true,
            "idempotentHint": true,
            "openWorldHint": false
        }),
    }
}

/// The arguments: none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {}

pub(crate) async fn run(call: &Call<'_>) -> Result<ToolOutcome, ToolError> {
    let Args {} = args::parse(NAME, call.arguments)?;
    let connections: Vec<Value> = call
        .services
        .connections
        .connected(call.principal)
        .await?
        .into_iter()
        .map(
            |connections::Connection {
                 provider, grant, ..
             }| {
                let when = |at: i64| (at > 0).then(|| rfc3339(at));
                json!({
                    "connection_id": grant.connection_id,
                    "provider": provider.id,
                    "provider_name": provider.display_name,
                    "account_id": grant.tokens.account.as_ref().map(|a| a.id.clone()),
                    "account": grant.tokens.account.map(|a| a.name),
                    "state": grant.state.as_str(),
                    "reason": grant.health.reason,
                    "scopes": grant.tokens.scopes,
                    "connected_since": rfc3339(grant.created_at),
                    "last_refreshed": when(grant.health.refreshed_at),
                    "last_used": when(grant.used_at),
                    "expires_at": grant.health.hard_expires_at.map(rfc3339),
                })
            },
        )
        .collect();
    let manage_at = format!(
        "{}{}",
        call.services.public_url,
        crate::identity::oidc::CONNECTIONS_PATH
    );
    Ok(ToolOutcome::Done(ToolResult::structured(
        json!({ "connections": connections, "manage_at": manage_at }),
    )))
}
