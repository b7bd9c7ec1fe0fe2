//! `connect_account`: shows the person a card to connect (or reconnect, or add another) account
//! at a provider, for hosts that render MCP Apps and show no sign-in link themselves. The tool
//! says where the connections stand; the `mcp` layer adds the connect link and binds the
//! result to the card (`crate::mcp::apps`). `connection_status`, which the card polls, lists
//! the same connections.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, Step, ToolError, ToolOutcome, ToolResult, ToolSpec, args, finish, target};
use crate::connections::Connection;
use crate::grants::State;
use crate::providers::Provider;

pub(crate) const NAME: &str = "connect_account";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "Connect a billing account",
        description: "Show the user a card with a button that opens the sign-in page of a \
                      billing provider, to connect an account, reconnect one that stopped \
                      working, add another, or pick which connected account to use. Call it \
                      when another tool says the account is not connected, then wait: the \
                      card sends a message once the user has connected. Where no card is \
                      shown, give the user the link in the result.",
        input_schema: json!({
            "type": "object",
            "properties": {"provider": provider_property()},
            "additionalProperties": false
        }),
        output_schema: Some(output_schema()),
        annotations: json!({
            "title": "Connect a billing account",
            "readOnlyHint": true,
            "openWorldHint": false
        }),
    }
}

/// The `provider` argument of the card's tools.
pub(super) fn provider_property() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": 64,
        "description": "Which provider (its id, as list_connections shows). Needed only when \
                        several are offered."
    })
}

fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["connect_required", "reconnect", "connected"]},
            "provider": {"type": "string"},
            "providerName": {"type": "string"},
            "connections": connections_schema()
        },
        "required": ["status", "provider", "providerName", "connections"]
    })
}

/// The connections at one provider, as the card reads them.
pub(super) fn connections_schema() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "connection_id": {"type": "string"},
                "account": {"type": ["string", "null"]},
                "account_id": {"type": ["string", "null"]},
                "state": {"type": "string", "enum": ["active", "refresh_failing", "needs_reauth"]},
                "signed_in_at": {"type": "integer", "description": "When the user last signed in for it (Unix seconds)."}
            },
            "required": ["connection_id", "account", "account_id", "state", "signed_in_at"]
        }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    provider: Option<String>,
}

/// The provider a card's tool is about.
pub(super) async fn provider<'a>(call: &Call<'a>, tool: &str) -> Step<&'a Provider> {
    let Args { provider } = args::parse(tool, call.arguments)?;
    if let Some(provider) = &provider {
        args::short(tool, "provider", provider, 64)?;
    }
    target::provider(call, provider.as_deref()).await
}

/// The caller's connections at `provider`, as the card reads them.
pub(super) async fn connections_at(call: &Call<'_>, provider: &Provider) -> Step<Vec<Value>> {
    let connections = call
        .services
        .connections
        .at(call.principal, provider)
        .await?;
    Ok(connections.iter().map(card_connection).collect())
}

fn card_connection(Connection { grant, .. }: &Connection<'_>) -> Value {
    let account = grant.tokens.account.as_ref();
    json!({
        "connection_id": grant.connection_id,
        "account": account.map(|a| a.name.clone()),
        "account_id": account.map(|a| a.id.clone()),
        "state": grant.state.as_str(),
        "signed_in_at": grant.signed_in_at(),
    })
}

pub(crate) async fn run(call: &Call<'_>) -> Result<ToolOutcome, ToolError> {
    finish(card(call).await, ToolOutcome::Done)
}

async fn card(call: &Call<'_>) -> Step<ToolOutcome> {
    let provider = provider(call, NAME).await?;
    let connections = connections_at(call, provider).await?;
    let needs_reauth = |c: &Value| c["state"] == State::NeedsReauth.as_str();
    let (status, said) = if connections.is_empty() {
        (
            "connect_required",
            format!(
                "A card to connect the user's {name} account is shown to the user. Wait until the \
             user says it is connected (the card sends a message), then retry what needed it.",
                name = provider.display_name
            ),
        )
    } else if connections.iter().any(needs_reauth) {
        (
            "reconnect",
            format!(
                "A card to reconnect the user's {name} account is shown to the user. Wait until the \
             user says it is reconnected, then retry what needed it.",
                name = provider.display_name
            ),
        )
    } else {
        (
            "connected",
            format!(
                "The user's {name} account is connected. The card shown lets the user pick which \
             connected account to use or connect another; wait for the user's message.",
                name = provider.display_name
            ),
        )
    };
    let mut result = ToolResult::structured(json!({
        "status": status,
        "provider": provider.id,
        "providerName": provider.display_name,
        "connections": connections,
    }));
    result.text = said;
    Ok(ToolOutcome::ShowCard {
        provider: provider.id.clone(),
        result,
    })
}
