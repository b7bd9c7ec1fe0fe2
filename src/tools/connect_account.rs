//! `connect_account`: shows the person a card to connect (or reconnect, or add another) account
//! at a provider, for hosts that render MCP Apps and show no sign-in link themselves. The tool
//! says where the connections stand; the `mcp` layer adds the connect link and binds the
//! result to the card (`crate::mcp_calls::apps`). `connection_status`, which the card polls, lists
//! the same connections.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::args::ProviderArg;
use super::{Call, Step, ToolError, ToolOutcome, ToolResult, ToolSpec, finish, schema, target};
use crate::connections::Connection;
use crate::grants::State;
use crate::ids::{AccountId, ConnectionId, ProviderId};
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
        input_schema: schema::input::<Args>(),
        output_schema: Some(schema::output::<Card>()),
        annotations: json!({
            "title": "Connect a billing account",
            "readOnlyHint": true,
            "openWorldHint": false
        }),
    }
}

/// The arguments of the card's tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    /// Which provider (its id, as list_connections shows). Needed only when several are
    /// offered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) provider: Option<ProviderArg>,
}

/// Where the person's connections at one provider stand, as the card reads them.
#[derive(Serialize, JsonSchema)]
struct Card {
    status: CardStatus,
    /// The provider's id.
    provider: ProviderId,
    /// The provider's name, as people know it.
    #[serde(rename = "providerName")]
    provider_name: String,
    connections: Vec<CardConnection>,
}

/// What the card offers: to connect, to reconnect, or to pick or add an account.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CardStatus {
    ConnectRequired,
    Reconnect,
    Connected,
}

/// One of the person's connections at the provider.
#[derive(Serialize, JsonSchema)]
pub(super) struct CardConnection {
    connection_id: ConnectionId,
    /// The account's name at the provider.
    account: Option<String>,
    /// The provider's id of the account.
    account_id: Option<AccountId>,
    /// Whether it works: active, refresh_failing (tried again later) or needs_reauth (the
    /// user must reconnect).
    state: State,
    /// When the user last signed in for it (Unix seconds).
    signed_in_at: i64,
}

/// The provider a card's tool is about.
pub(super) async fn provider<'a>(call: &Call<'a>, args: &Args) -> Step<&'a Provider> {
    target::provider(call, args.provider.as_deref()).await
}

/// The caller's connections at `provider`, as the card reads them.
pub(super) async fn connections_at(
    call: &Call<'_>,
    provider: &Provider,
) -> Step<Vec<CardConnection>> {
    let connections = call
        .services
        .connections
        .at(call.principal, provider)
        .await?;
    Ok(connections.iter().map(card_connection).collect())
}

fn card_connection(Connection { grant, .. }: &Connection<'_>) -> CardConnection {
    let account = grant.tokens.account.as_ref();
    CardConnection {
        connection_id: grant.connection_id.clone(),
        account: account.map(|a| a.name.clone()),
        account_id: account.map(|a| a.id.clone()),
        state: grant.state,
        signed_in_at: grant.signed_in_at(),
    }
}

pub(crate) async fn run(call: &Call<'_>, args: &Args) -> Result<ToolOutcome, ToolError> {
    finish(card(call, args).await, ToolOutcome::Done)
}

async fn card(call: &Call<'_>, args: &Args) -> Step<ToolOutcome> {
    let provider = provider(call, args).await?;
    let connections = connections_at(call, provider).await?;
    let needs_reauth = |c: &CardConnection| c.state == State::NeedsReauth;
    let (status, said) = if connections.is_empty() {
        (
            CardStatus::ConnectRequired,
            format!(
                "A card to connect the user's {name} account is shown to the user. Wait until the \
             user says it is connected (the card sends a message), then retry what needed it.",
                name = provider.display_name
            ),
        )
    } else if connections.iter().any(needs_reauth) {
        (
            CardStatus::Reconnect,
            format!(
                "A card to reconnect the user's {name} account is shown to the user. Wait until the \
             user says it is reconnected, then retry what needed it.",
                name = provider.display_name
            ),
        )
    } else {
        (
            CardStatus::Connected,
            format!(
                "The user's {name} account is connected. The card shown lets the user pick which \
             connected account to use or connect another; wait for the user's message.",
                name = provider.display_name
            ),
        )
    };
    let mut result = ToolResult::structured_from(&Card {
        status,
        provider: provider.id.clone(),
        provider_name: provider.display_name.clone(),
        connections,
    });
    result.text = said;
    Ok(ToolOutcome::ShowCard {
        provider: provider.id.clone(),
        result,
    })
}
