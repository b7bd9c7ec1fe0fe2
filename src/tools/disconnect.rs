//! `disconnect_account`: remove a connection, only after the user confirmed it. The tool
//! itself never asks: the `mcp` layer runs the confirmation round (a form-mode elicitation)
//! and calls [`execute`] only on an explicit `accept` with `confirm: true`.
//!
//! The grant is removed here first, then revoked at the provider; the result says honestly
//! whether the provider could be told.

use serde_json::{Map, Value, json};

use super::{ToolError, ToolResult, ToolSpec};
use crate::audit::Audit;
use crate::grants::GrantKey;
use crate::identity::Principal;
use crate::providers::{Provider, revocation};
use crate::state::AppState;

pub const NAME: &str = "disconnect_account";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "Disconnect a billing account",
        description: "Remove the user's connection to a billing provider and revoke grantry's \
                      access there. The user is asked to confirm first; nothing is removed \
                      without that confirmation.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "provider": {"type": "string", "description": "The provider id, as list_connections shows it."}
            },
            "required": ["provider"],
            "additionalProperties": false
        }),
        output_schema: None,
        annotations: json!({
            "title": "Disconnect a billing account",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": true,
            "openWorldHint": true
        }),
    }
}

/// What the user is asked to confirm.
pub struct Confirmation<'a> {
    pub provider: &'a Provider,
    /// Which connection: its creation time (a reconnection is another connection).
    pub connected_at: i64,
    pub message: String,
}

/// The provider named in the arguments, checked.
pub fn provider<'a>(
    state: &'a AppState,
    arguments: &Map<String, Value>,
) -> Result<&'a Provider, ToolError> {
    if let Some(other) = arguments.keys().find(|k| *k != "provider") {
        return Err(ToolError::InvalidArguments(format!(
            "unknown argument `{other}`; disconnect_account takes provider"
        )));
    }
    let id = arguments
        .get("provider")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArguments("provider is required".into()))?;
    state
        .catalog
        .get(id)
        .ok_or_else(|| ToolError::InvalidArguments(format!("provider `{id}` is not offered here")))
}

/// What to ask, or the final answer when there is nothing to disconnect.
pub async fn prepare<'a>(
    state: &'a AppState,
    principal: &Principal,
    provider: &'a Provider,
) -> Result<Result<Confirmation<'a>, ToolResult>, ToolError> {
    let key = GrantKey {
        principal: principal.clone(),
        provider: provider.id.clone(),
    };
    let Some(grant) = state.grants.get(&key).await? else {
        return Ok(Err(ToolResult::text(format!(
            "No {} account is connected, so there is nothing to disconnect.",
            provider.display_name
        ))));
    };
    let which = match &grant.tokens.account {
        Some(account) => format!("{} ({})", provider.display_name, account.name),
        None => provider.display_name.clone(),
    };
    Ok(Ok(Confirmation {
        provider,
        connected_at: grant.created_at,
        message: format!(
            "Disconnect {which}? grantry will forget this connection and ask {} to revoke its \
             access. This cannot be undone: to use it again you would connect it anew.",
            provider.display_name
        ),
    }))
}

/// Removes the connection the user confirmed, then revokes it at the provider.
pub async fn execute(
    state: &AppState,
    principal: &Principal,
    provider: &Provider,
    connected_at: i64,
) -> Result<ToolResult, ToolError> {
    let key = GrantKey {
        principal: principal.clone(),
        provider: provider.id.clone(),
    };
    let name = &provider.display_name;
    // Under the grant's refresh lease: a refresh finishing meanwhile would otherwise store
    // tokens issued after these were revoked.
    let lease = super::access::lease_name(&key);
    let holder = crate::seal::random_id();
    let mut waited = 0;
    while !state.leases.try_acquire(&lease, &holder, LEASE_MS).await? {
        waited += 1;
        if waited > 150 {
            return Ok(ToolResult::error(format!(
                "The {name} connection is being refreshed right now, so nothing was removed. \
                 Try again in a minute."
            )));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let done = remove_and_revoke(state, principal, provider, &key, connected_at).await;
    state.leases.release(&lease, &holder).await?;
    done
}

/// How long disconnecting may hold the grant's lease (longer than the revocation request).
const LEASE_MS: i64 = 30_000;

async fn remove_and_revoke(
    state: &AppState,
    principal: &Principal,
    provider: &Provider,
    key: &GrantKey,
    connected_at: i64,
) -> Result<ToolResult, ToolError> {
    let name = &provider.display_name;
    let grant = match state.grants.get(key).await? {
        Some(grant) if grant.created_at == connected_at => grant,
        Some(_) => {
            return Ok(ToolResult::error(format!(
                "The {name} connection changed after you confirmed (it was connected again), so \
                 nothing was removed. Ask again to disconnect the new one."
            )));
        }
        None => {
            return Ok(ToolResult::text(format!(
                "No {name} account is connected any more; nothing else to do."
            )));
        }
    };
    // Here first: whatever the provider says, grantry no longer uses the tokens.
    if !state.grants.delete_if_unchanged(key, grant.version).await? {
        return Ok(ToolResult::error(format!(
            "The {name} connection was being updated; nothing was removed. Try again."
        )));
    }
    Audit {
        principal: Some(principal),
        provider: Some(&provider.id),
        flow_id: None,
    }
    .notice("grant.removed", "disconnected by the user");
    let (token, is_refresh) = match grant.tokens.refresh_token.as_deref() {
        Some(refresh) => (refresh, true),
        None => (grant.tokens.access_token.as_str(), false),
    };
    let text = match revocation::revoke(&state.http, provider, token, is_refresh).await {
        Ok(true) => {
            format!("Disconnected {name}. {name} confirmed that grantry's access is revoked.")
        }
        Ok(false) => format!(
            "Disconnected {name}: grantry has forgotten the connection. {name} offers no way for \
             grantry to revoke its access; remove the app in your {name} settings as well."
        ),
        Err(e) => {
            tracing::warn!(provider = %provider.id, error = %e, "revocation failed");
            let why = match e {
                crate::providers::http::OutboundError::Status(status) if status < 500 => {
                    format!("{name} refused to revoke its access (HTTP {status})")
                }
                _ => format!("{name} could not be reached to revoke its access"),
            };
            format!(
                "Disconnected {name}: grantry has forgotten the connection, but {why}. The \
                 access ends when its tokens expire; you can also remove the app in your {name} \
                 settings."
            )
        }
    };
    Ok(ToolResult::text(text))
}
