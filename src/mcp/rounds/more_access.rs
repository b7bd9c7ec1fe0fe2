//! Incremental consent: a tool that writes at a provider whose connection may only read asks
//! for write access first, through the same URL-mode round as a first sign-in. The link's
//! sign-in asks the provider for the union of what the connection has and what the tool
//! needs; the callback stores it over the same connection (same id, `connection.scopes_changed`).
//!
//! Only an entry that names scopes per access level can lack write access; for every other
//! the gate lets the call through. A provider that grants less than asked ends the call with
//! a tool error saying so: nothing is tried with a token that cannot write.

use serde_json::{Map, Value};

use super::Retry;
use super::request_state::{StateClaims, ToolRequest};
use super::sign_in::{self, Answer, HoldEnd, UrlElicitation, Wanted};
use crate::connections::consent;
use crate::mcp::capabilities::Capabilities;
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::results::CallAnswer;
use crate::providers::Provider;
use crate::tools::{Call, Tool, ToolResult, target};
use grantry_base::clock::unix_now;

/// Whether the tool's own rounds may run.
pub(super) enum Gate {
    /// Yes (after this gate's round: from the tool's first round).
    Proceed,
    /// No: this is the call's answer (the round asking for more, or why it cannot be had).
    Answer(CallAnswer),
}

/// A retry of this gate's round: held until the sign-in lands, then through if the
/// connection may now write, else the answer saying why not.
pub(super) async fn after_round(
    call: &Call<'_>,
    tool: Tool,
    retry: &Retry,
) -> Result<Option<Gate>, RpcError> {
    let Some(claims) = our_round(call, tool, retry) else {
        return Ok(None);
    };
    if let Answer::Refused(action) = sign_in::answer(retry.responses.as_ref(), &claims.provider) {
        return Ok(Some(Gate::Answer(
            refused(call, tool, &claims, &action).into(),
        )));
    }
    // Write access may have come another way meanwhile (the connections page, another call).
    if lacking(call, tool).await.is_none() {
        return Ok(Some(Gate::Proceed));
    }
    let (state, principal) = (call.state, call.principal);
    let gate = match sign_in::hold(state, principal, &claims).await {
        HoldEnd::Connected(_turn) => match lacking(call, tool).await {
            Some((provider, missing)) => {
                Gate::Answer(granted_less(call, tool, provider, &missing).into())
            }
            None => Gate::Proceed,
        },
        HoldEnd::Denied => Gate::Answer(refused(call, tool, &claims, "declined").into()),
        HoldEnd::StillPending => Gate::Answer(CallAnswer::InputRequired(sign_in::repeat_round(
            state, principal, &claims,
        ))),
        HoldEnd::NeverOpened => Gate::Answer(sign_in::never_opened(state, &claims).into()),
    };
    Ok(Some(gate))
}

/// Before the tool's first round: through, unless the tool writes and the connection it
/// would use may not; then the round asking for write access (or, where no person can open
/// a link, the answer saying so). `call` is at the account chosen, if one was; the round's
/// state is bound to the `asked` arguments, as the client will send them again.
pub(super) async fn before_first_round(
    call: &Call<'_>,
    asked: &Map<String, Value>,
    tool: Tool,
    capabilities: Capabilities,
) -> Gate {
    let Some((provider, _)) = lacking(call, tool).await else {
        return Gate::Proceed;
    };
    let state = call.state;
    if capabilities.no_person {
        return Gate::Answer(sign_in::no_person_to_sign_in(state, tool, &provider.id).into());
    }
    let wanted = Wanted {
        provider: &provider.id,
        access: tool.access(),
        reason: None,
    };
    if !capabilities.url_elicitation {
        return Gate::Answer(sign_in::link_for_person(state, call.principal, wanted).into());
    }
    let as_asked = Call {
        arguments: asked,
        ..*call
    };
    let round = sign_in::first_round(state, wanted, request(&as_asked, tool));
    Gate::Answer(CallAnswer::InputRequired(round))
}

/// In a legacy-era session (no `requestState`, no URL round mid-call): the URL elicitation
/// to send as `-32042` when the tool writes and its connection may not; the client's retry
/// of the same call finds write access there. `None`: the call goes on (and a caller that
/// cannot open a link is answered by [`before_first_round`]).
pub(crate) async fn legacy_first(
    call: &Call<'_>,
    tool: Tool,
    capabilities: Capabilities,
) -> Option<UrlElicitation> {
    if capabilities.no_person || !capabilities.url_elicitation {
        return None;
    }
    let (provider, _) = lacking(call, tool).await?;
    let wanted = Wanted {
        provider: &provider.id,
        access: tool.access(),
        reason: None,
    };
    Some(sign_in::url_elicitation(call.state, call.principal, wanted))
}

/// The sign-in state this gate handed out, if the retry brings one back for this call.
fn our_round(call: &Call<'_>, tool: Tool, retry: &Retry) -> Option<StateClaims> {
    let sealed = retry.request_state.as_deref()?;
    // Another round's state (a form's, a choice's) is sealed for another purpose: not ours.
    StateClaims::open(&call.state.sealer, sealed, unix_now(), request(call, tool))
        .ok()
        .filter(|claims| claims.access == tool.access())
}

/// The provider and what its connection lacks, when `tool` writes and the connection the
/// call would use is usable but may not write. Anything else (no connection, several, one
/// needing a sign-in) is the tool's own to answer.
async fn lacking<'a>(call: &Call<'a>, tool: Tool) -> Option<(&'a Provider, Vec<String>)> {
    let access = tool.access();
    if !access.writes_at_provider() {
        return None;
    }
    let named = |name: &str| call.arguments.get(name).and_then(|v| v.as_str());
    let provider = target::provider(call, named("provider")).await.ok()?;
    if !provider.asks_per_access() {
        return None;
    }
    let chosen = target::account_or_refusal(call, provider, named("account"))
        .await
        .ok()?;
    let grant = call.state.connections.grant(&chosen.key).await.ok()??;
    let missing = consent::lacking(provider, &grant, access);
    (grant.is_usable() && !missing.is_empty()).then_some((provider, missing))
}

fn request<'a>(call: &Call<'a>, tool: Tool) -> ToolRequest<'a> {
    ToolRequest {
        principal: call.principal,
        tool: tool.name(),
        arguments: call.arguments,
    }
}

/// Write access was not given (the person declined the round, or at the provider).
fn refused(call: &Call<'_>, tool: Tool, claims: &StateClaims, why: &str) -> ToolResult {
    let name = sign_in::display_name(call.state, &claims.provider);
    ToolResult::error(format!(
        "{} needs write access to the user's {name} account, which was not given (the user \
         chose '{why}'), so nothing was written. The connection still reads as before.",
        tool.name()
    ))
}

/// The provider granted less than asked: nothing is tried with a token that cannot write.
fn granted_less(
    call: &Call<'_>,
    tool: Tool,
    provider: &Provider,
    missing: &[String],
) -> ToolResult {
    let name = &provider.display_name;
    ToolResult::error(format!(
        "{name} granted only part of the access asked for: {} needs {} there, which the user \
         did not allow, so nothing was written. If they want it, they can connect {name} \
         again and allow it (from {}/connections), then ask again.",
        tool.name(),
        missing.join(", "),
        call.state.config.public_url
    ))
}
