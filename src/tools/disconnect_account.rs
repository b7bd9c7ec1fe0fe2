//! `disconnect_account`: remove a connection, only after the user confirmed it (the `mcp`
//! layer asks, and calls [`ConfirmTool::execute`] only on an explicit yes).
//!
//! The grant is removed here first, then revoked at the provider; the result says honestly
//! whether the provider could be told.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{
    Call, ConfirmTool, Prepared, Question, Subject, ToolError, ToolResult, ToolSpec, args, target,
};
use crate::audit::Audit;
use crate::grants::{Grant, GrantKey};
use crate::providers::{Provider, revocation};

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
                "provider": {"type": "string", "minLength": 1, "maxLength": 64,
                    "description": "The provider id, as list_connections shows it."}
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

/// The arguments, as the schema gives them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    provider: String,
}

pub struct DisconnectAccount;

impl DisconnectAccount {
    /// The provider named, if it is offered here; otherwise the answer saying it is not.
    fn provider<'a>(call: &Call<'a>) -> Result<Result<&'a Provider, ToolResult>, ToolError> {
        let Args { provider } = args::parse(NAME, call.arguments)?;
        args::short(NAME, "provider", &provider, 64)?;
        Ok(call.state.catalog.get(&provider).ok_or_else(|| {
            ToolResult::error(format!("The provider `{provider}` is not offered here."))
        }))
    }
}

#[async_trait]
impl ConfirmTool for DisconnectAccount {
    async fn prepare(&self, call: &Call<'_>) -> Result<Prepared, ToolError> {
        let provider = match Self::provider(call)? {
            Ok(provider) => provider,
            Err(answer) => return Ok(Prepared::Done(answer)),
        };
        let key = target::key(call.principal, provider);
        let Some(grant) = call.state.grants.get(&key).await? else {
            return Ok(Prepared::Done(ToolResult::text(format!(
                "No {} account is connected, so there is nothing to disconnect.",
                provider.display_name
            ))));
        };
        let which = match &grant.tokens.account {
            Some(account) => format!("{} ({})", provider.display_name, account.name),
            None => provider.display_name.clone(),
        };
        Ok(Prepared::Ask(Question {
            // Which connection: a reconnection since is another one.
            subject: Subject {
                provider: provider.id.to_string(),
                what: grant.signed_in_at().to_string(),
            },
            title: format!("Disconnect {}", provider.display_name),
            message: format!(
                "Disconnect {which}? grantry will forget this connection and ask {} to revoke \
                 its access. This cannot be undone: to use it again you would connect it anew.",
                provider.display_name
            ),
        }))
    }

    /// Removes the connection the user confirmed, then revokes it at the provider; under the
    /// grant's refresh lease, so a refresh finishing meanwhile cannot store tokens issued
    /// after these were revoked.
    async fn execute(&self, call: &Call<'_>, subject: &Subject) -> Result<ToolResult, ToolError> {
        let provider = match Self::provider(call)? {
            Ok(provider) if provider.id == subject.provider => provider,
            Ok(_) => return Err(confirmed_elsewhere()),
            Err(answer) => return Ok(answer),
        };
        let connected_at = subject.what.parse().unwrap_or_default();
        let key = target::key(call.principal, provider);
        let leases = &call.state.leases;
        let lease = crate::grants::access::lease_name(&key);
        let holder = crate::seal::random_id();
        let mut waited = 0;
        while !leases.try_acquire(&lease, &holder, LEASE_MS).await? {
            waited += 1;
            if waited > 150 {
                return Ok(ToolResult::error(format!(
                    "The {} connection is being refreshed right now, so nothing was removed. \
                     Try again in a minute.",
                    provider.display_name
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let done = remove_and_revoke(call, provider, &key, connected_at).await;
        leases.release(&lease, &holder).await?;
        done
    }

    fn cancelled(&self) -> ToolResult {
        ToolResult::text("Disconnect cancelled; nothing was removed.")
    }
}

/// A yes given to a question about something else than this call would now act on.
pub(super) fn confirmed_elsewhere() -> ToolError {
    ToolError::InvalidArguments("the confirmation was given for something else".into())
}

/// How long disconnecting may hold the grant's lease (longer than the revocation request).
const LEASE_MS: i64 = 30_000;

async fn remove_and_revoke(
    call: &Call<'_>,
    provider: &Provider,
    key: &GrantKey,
    connected_at: i64,
) -> Result<ToolResult, ToolError> {
    let (state, principal) = (call.state, call.principal);
    let name = &provider.display_name;
    let grant = match state.grants.get(key).await? {
        Some(grant) if grant.signed_in_at() == connected_at => grant,
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
    if !state
        .grants
        .disconnect(
            key,
            &grant,
            "disconnected by the user",
            crate::clock::unix_now(),
        )
        .await?
    {
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
    Ok(ToolResult::text(revoke(call, provider, &grant).await))
}

/// Asks the provider to revoke the grant's tokens; what the user is told about it.
async fn revoke(call: &Call<'_>, provider: &Provider, grant: &Grant) -> String {
    let name = &provider.display_name;
    let (token, is_refresh) = match grant.tokens.refresh_token.as_deref() {
        Some(refresh) => (refresh, true),
        None => (grant.tokens.access_token.as_str(), false),
    };
    match revocation::revoke(&call.state.http, provider, token, is_refresh).await {
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
    }
}
