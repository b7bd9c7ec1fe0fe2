//! What a call comes to for a host that renders MCP Apps but shows no sign-in link
//! ([`crate::mcp_calls::apps`]): `connect_account`'s result, bound to the connect card and carrying
//! its link; and a tool that needs a connection telling the model to show that card, with the
//! link in its words for hosts that show none.

use serde_json::{Map, json};

use crate::flows::Handout;
use crate::grants::ReauthReason;
use crate::identity::Principal;
use crate::mcp_calls::apps::{CARD_URI, CONNECT_META};
use crate::mcp_calls::results::CallResult;
use crate::mcp_calls::rounds::Rounds;
use crate::mcp_calls::rounds::sign_in::{self, ConnectLink};
use crate::outbox::rfc3339;
use crate::providers::ProviderId;
use crate::tools::{Tool, ToolResult};

/// `connect_account`'s `result` with fresh connect links: one in `_meta` for the card, and
/// another in the words for a host that shows no card (its page tells the person to ask
/// again, since no card waits for it).
pub(crate) fn card_result(
    rounds: &Rounds<'_>,
    principal: &Principal,
    provider: &ProviderId,
    mut result: ToolResult,
) -> CallResult {
    let ConnectLink { url, expires_at } =
        sign_in::connect_link(rounds, principal, provider, Handout::Card);
    let in_words = sign_in::connect_link(rounds, principal, provider, Handout::AskAgain).url;
    result.text = format!(
        "{} If no card is shown, give the user this link (it works only for them): {in_words}",
        result.text
    );
    let mut meta = Map::new();
    meta.insert(
        CONNECT_META.into(),
        json!({"url": url, "expiresAt": rfc3339(expires_at)}),
    );
    meta.insert("ui".into(), json!({"resourceUri": CARD_URI}));
    CallResult {
        meta: Some(meta),
        ..result.into()
    }
}

/// A tool that needs a connection, called by a host that renders the card: show the card
/// (`connect_account`), then wait; the link for hosts that show no card.
pub(crate) fn show_the_card(
    rounds: &Rounds<'_>,
    principal: &Principal,
    tool: Tool,
    provider: &ProviderId,
    reason: Option<ReauthReason>,
) -> ToolResult {
    let link = sign_in::connect_link(rounds, principal, provider, Handout::AskAgain);
    let arguments = json!({"provider": provider});
    ToolResult::error(format!(
        "{} Call the tool {} with {arguments} to show the user a card with a Connect button, \
         then wait: call {} again only once the user says the account is connected. If no \
         card is shown, give the user this link (it works only for them): {}",
        sign_in::not_usable(rounds, provider, reason),
        Tool::ConnectAccount.name(),
        tool.name(),
        link.url
    ))
}

/// What a task waiting on a sign-in tells a host that renders the card and shows no link:
/// show the card; the task completes by itself once the account is connected.
pub(crate) fn task_waits_on_card(provider: &ProviderId, link: &str) -> String {
    format!(
        "Call the tool {} with {} to show the user a card with a Connect button. This task \
         completes by itself once the account is connected: keep polling it. If no card is \
         shown, give the user this link (it works only for them): {link}",
        Tool::ConnectAccount.name(),
        json!({"provider": provider}),
    )
}

/// The connected accounts listed for the model to choose from, and the card to let the person
/// choose.
pub(crate) fn pick_on_the_card(mut listed: ToolResult, provider: &ProviderId) -> ToolResult {
    listed.text = format!(
        "{} Or call the tool {} with {} to show the user a card where they pick one.",
        listed.text,
        Tool::ConnectAccount.name(),
        json!({"provider": provider})
    );
    listed
}
