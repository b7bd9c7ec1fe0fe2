//! Incremental consent: a tool that writes at a provider whose connection may only read asks
//! for write access first, through the same URL-mode round as a first sign-in. The link's
//! sign-in asks the provider for the union of what the connection has and what the tool
//! needs; the callback stores it over the same connection when the person picks the same
//! account there (same id, `connection.scopes_changed`).
//!
//! Only an entry that names scopes per access level can lack write access; for every other
//! the gate lets the call through. A provider that grants less than asked ends the call with
//! a tool error saying so (in the legacy era, which keeps nothing between calls, the retry is
//! asked again): nothing is tried with a token that cannot write.

use tokio::sync::SemaphorePermit;

use crate::ids::AccountId;
use crate::mcp_calls::results::CallAnswer;
use crate::mcp_calls::rounds::Retry;
use crate::mcp_calls::rounds::RoundCall;
use crate::mcp_calls::rounds::request_state::{ArgumentsDigest, StateClaims, ToolRequest};
use crate::mcp_calls::rounds::sign_in::{self, Answer, HoldEnd, UrlElicitation, Wanted};
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::providers::Provider;
use crate::tools::{Stop, Tool, ToolError, ToolResult, target};
use grantry_base::clock::unix_now;

/// Whether the tool's own rounds may run.
pub(super) enum Gate<'s> {
    /// Yes. After this gate's round: from the tool's first round, at the account the call
    /// was pinned to (if any), holding the turn the sign-in's hold gave it.
    Proceed {
        account: Option<AccountId>,
        turn: Option<SemaphorePermit<'s>>,
    },
    /// No: this is the call's answer (the round asking for more, or why it cannot be had).
    Answer(CallAnswer),
}

impl Gate<'_> {
    fn through() -> Self {
        Gate::Proceed {
            account: None,
            turn: None,
        }
    }
}

/// A retry of this gate's round: held until the sign-in lands, then through if the
/// connection may now write, else the answer saying why not. `None`: not such a retry.
pub(super) async fn after_round<'s>(
    call: &RoundCall<'s>,
    tool: Tool,
    retry: &Retry,
) -> Result<Option<Gate<'s>>, RpcError> {
    let Some(claims) = our_round(call, tool, retry) else {
        return Ok(None);
    };
    if let Answer::Refused(action) = sign_in::answer(retry.responses.as_ref(), &claims.provider) {
        return Ok(Some(Gate::Answer(
            refused(call, tool, &claims, &action).into(),
        )));
    }
    // At the account the round was asked at.
    let at = call.at(claims.account.as_ref());
    let through = |turn| Gate::Proceed {
        account: claims.account.clone(),
        turn,
    };
    // Write access may have come another way meanwhile (the connections page, another call).
    if lacking(&at, tool).await?.is_none() {
        return Ok(Some(through(None)));
    }
    let (rounds, principal) = (&call.rounds, call.principal);
    let gate = match sign_in::hold(rounds, principal, &claims, retry.patience).await {
        HoldEnd::Connected(turn) => match lacking(&at, tool).await? {
            Some((provider, missing)) => {
                Gate::Answer(granted_less(call, tool, provider, &missing).into())
            }
            None => through(Some(turn)),
        },
        HoldEnd::Denied => Gate::Answer(refused(call, tool, &claims, "declined").into()),
        HoldEnd::StillPending => Gate::Answer(CallAnswer::InputRequired(sign_in::repeat_round(
            rounds, principal, &claims,
        ))),
        HoldEnd::NeverOpened => {
            Gate::Answer(sign_in::never_opened(rounds, principal, &claims).into())
        }
    };
    Ok(Some(gate))
}

/// Before the tool's first round: through, unless the tool writes and the connection it
/// would use may not; then the round asking for write access (where no person can open a
/// link, the answer saying so; for a client without URL rounds, the link in a tool error, for
/// the model to hand on). `call` is at the account chosen, if one was; the round's state is
/// bound to the client's arguments, as the client will send them again.
pub(super) async fn before_first_round<'s>(
    call: &RoundCall<'s>,
    tool: Tool,
    capabilities: Capabilities,
) -> Result<Gate<'s>, RpcError> {
    let Some((provider, _)) = lacking(call, tool).await? else {
        return Ok(Gate::through());
    };
    let rounds = &call.rounds;
    if capabilities.no_person {
        let answer = sign_in::no_person_to_sign_in(rounds, tool, &provider.id);
        return Ok(Gate::Answer(answer.into()));
    }
    let wanted = Wanted {
        provider: &provider.id,
        access: tool.access(),
        reason: None,
        account: call.chosen_account,
    };
    if !capabilities.url_elicitation {
        let answer = sign_in::link_for_person(rounds, call.principal, wanted);
        return Ok(Gate::Answer(answer.into()));
    }
    let round = sign_in::first_round(rounds, wanted, request(call, tool));
    Ok(Gate::Answer(CallAnswer::InputRequired(round)))
}

/// In a legacy-era session (no `requestState`, no URL round mid-call): the URL elicitation
/// to send as `-32042` when the tool writes and its connection may not; the client's retry
/// of the same call finds write access there, if the person granted it. `None`: the call
/// goes on (a caller that cannot open a link, or one whose account is still to be chosen, is
/// answered by [`before_first_round`]).
pub(crate) async fn legacy_first(
    call: &RoundCall<'_>,
    tool: Tool,
    capabilities: Capabilities,
) -> Result<Option<UrlElicitation>, RpcError> {
    if capabilities.no_person || !capabilities.url_elicitation {
        return Ok(None);
    }
    let Some((provider, _)) = lacking(call, tool).await? else {
        return Ok(None);
    };
    let wanted = Wanted {
        provider: &provider.id,
        access: tool.access(),
        reason: None,
        account: None,
    };
    Ok(Some(sign_in::url_elicitation(
        &call.rounds,
        call.principal,
        wanted,
    )))
}

/// The sign-in state this gate handed out, if the retry brings one back for this call.
fn our_round(call: &RoundCall<'_>, tool: Tool, retry: &Retry) -> Option<StateClaims> {
    let sealed = retry.request_state.as_deref()?;
    // Another round's state (a form's, a choice's) is sealed for another purpose: not ours.
    StateClaims::open(call.rounds.sealer, sealed, unix_now(), request(call, tool))
        .ok()
        .filter(|claims| claims.access == tool.access())
}

/// The provider and what its connection lacks, when `tool` writes and the connection the
/// call would use is usable but may not write. Anything else (no connection, several and
/// none chosen, one needing a sign-in) is the tool's own to answer; a store that cannot say
/// is an error, never "nothing lacking" (a write tried with a read token would be refused
/// and mark the connection broken).
async fn lacking<'a>(
    call: &RoundCall<'a>,
    tool: Tool,
) -> Result<Option<(&'a Provider, Vec<String>)>, RpcError> {
    let access = tool.access();
    if !access.writes_at_provider() {
        return Ok(None);
    }
    let (named_provider, named_account) = call.arguments.target();
    let found = async {
        let provider = target::provider(call, named_provider).await?;
        let chosen = target::account_or_refusal(call, provider, named_account).await?;
        Ok::<_, Stop>((provider, chosen))
    };
    let (provider, chosen) = match found.await {
        Ok(found) => found,
        Err(Stop::Answer(_)) => return Ok(None),
        Err(Stop::Failed(error)) => return Err(error.into()),
    };
    if !provider.asks_per_access() {
        return Ok(None);
    }
    let grant = call.rounds.tools.connections.grant(&chosen.key).await;
    let Some(grant) = grant.map_err(ToolError::from)? else {
        return Ok(None);
    };
    let missing = provider.lacking_for(access, &grant.tokens.scopes);
    Ok((grant.is_usable() && !missing.is_empty()).then_some((provider, missing)))
}

fn request<'a>(call: &RoundCall<'a>, tool: Tool) -> ToolRequest<'a> {
    ToolRequest {
        principal: call.principal,
        tool: tool.name(),
        arguments: ArgumentsDigest::of(call.arguments),
    }
}

/// Write access was not given (the person declined the round, or at the provider).
fn refused(call: &RoundCall<'_>, tool: Tool, claims: &StateClaims, why: &str) -> ToolResult {
    let name = sign_in::display_name(&call.rounds, &claims.provider);
    ToolResult::error(format!(
        "{} needs write access to the user's {name} account, which was not given (the user \
         chose '{why}'), so nothing was written. The connection still reads as before.",
        tool.name()
    ))
}

/// The provider granted less than asked: nothing is tried with a token that cannot write.
fn granted_less(
    call: &RoundCall<'_>,
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
        call.rounds.tools.public_url
    ))
}
