//! The URL-mode sign-in rounds of a tool call (MRTR).
//!
//! Round one: the tool needs a provider the caller has not connected, so the answer is
//! `input_required` with one URL-mode `elicitation/create` pointing at grantry's connect page,
//! and a sealed `requestState`. Nothing is written to the store.
//! The retry: `decline` / `cancel` end the call; otherwise the tool runs again, and while the
//! sign-in is still pending the request is held (the edge layer keeps the connection alive)
//! until the grant lands or the hold passes, then the same link is offered again.

use serde_json::{Map, Value};

mod hold;
mod message;

pub(crate) use hold::{HoldEnd, SignInEnd, ended, hold};
use message::connect_message;

use crate::access::Access;
use crate::connect::ticket::{Ticket, link};
use crate::flows::Handout;
use crate::grants::ReauthReason;
use crate::identity::Principal;
use crate::ids::AccountId;
use crate::mcp_calls::results::{Elicitation, InputRequest, InputRequired};
use crate::mcp_calls::rounds::Rounds;
use crate::mcp_calls::rounds::request_state::{StateClaims, ToolRequest};
use crate::providers::ProviderId;
use crate::tools::{Tool, ToolResult};
use crate::ui::Lang;
use grantry_base::clock::unix_now;

/// The `inputRequests` key of the sign-in request for `provider`.
pub(crate) fn input_key(provider: &ProviderId) -> String {
    format!("connect_{provider}")
}

/// What a sign-in round asks for: a connection at `provider` that serves calls with
/// `access`, and why an existing one can no longer be used (`reason`, said in the message).
#[derive(Clone, Copy)]
pub(crate) struct Wanted<'a> {
    pub(crate) provider: &'a ProviderId,
    pub(crate) access: Access,
    pub(crate) reason: Option<ReauthReason>,
    /// The account the call was pinned to, kept in the round's state for its retry.
    pub(crate) account: Option<&'a AccountId>,
}

impl<'a> Wanted<'a> {
    /// A connection that reads, as every plain tool needs.
    pub(crate) fn to_read(provider: &'a ProviderId, reason: Option<ReauthReason>) -> Self {
        Self {
            provider,
            access: Access::Read,
            reason,
            account: None,
        }
    }
}

/// A fresh sign-in round: a new ticket and link, and the state the retry must bring back.
pub(crate) fn first_round(
    rounds: &Rounds<'_>,
    wanted: Wanted<'_>,
    request: ToolRequest<'_>,
) -> InputRequired {
    let now = unix_now();
    let (provider, access) = (wanted.provider, wanted.access);
    let (ticket, sealed_ticket, expires_at) = new_ticket(
        rounds,
        request.principal,
        (provider, access, Handout::Waits),
        now,
    );
    let mut claims = StateClaims::new(&ticket.id, &sealed_ticket, expires_at, provider, request);
    claims.access = access;
    claims.account = wanted.account.cloned();
    input_required(rounds, &claims, wanted.reason, now)
}

/// For a client that cannot open URLs itself (`--no-url-elicitation=link`): a tool error
/// whose text carries a connect link for the person to open, then ask again. Nothing is
/// written; the link works only for the caller (the connect page checks who is there).
pub(crate) fn link_for_person(
    rounds: &Rounds<'_>,
    principal: &Principal,
    wanted: Wanted<'_>,
) -> ToolResult {
    let (provider, reason) = (wanted.provider, wanted.reason);
    let handed = (provider, wanted.access, Handout::AskAgain);
    let (_, sealed, _) = new_ticket(rounds, principal, handed, unix_now());
    let url = link(rounds.tools.public_url, &sealed);
    let what = if wanted.access.writes_at_provider() && reason.is_none() {
        let name = display_name(rounds, provider);
        format!("The user's {name} connection may only read; this needs write access.")
    } else {
        not_usable(rounds, provider, reason)
    };
    ToolResult::error(format!(
        "{what} Give the user this link to connect it (it works only for them), then ask \
         again once they say it is connected: {url}"
    ))
}

/// Why the call needs a sign-in, for the model: not connected, or why it must be renewed.
pub(crate) fn not_usable(
    rounds: &Rounds<'_>,
    provider: &ProviderId,
    reason: Option<ReauthReason>,
) -> String {
    let name = display_name(rounds, provider);
    match reason {
        Some(why) => format!(
            "The user's {name} connection needs to be renewed: {}.",
            why.explained(Lang::En, rounds.tools.brand, name)
        ),
        None => format!("The user's {name} account is not connected yet."),
    }
}

/// A connect link for `principal` at `provider`, on a fresh ticket.
pub(crate) struct ConnectLink {
    pub(crate) url: String,
    /// When the link stops working (Unix seconds).
    pub(crate) expires_at: i64,
}

/// A fresh connect link, to be handed out as `handout` says. Nothing is written.
pub(crate) fn connect_link(
    rounds: &Rounds<'_>,
    principal: &Principal,
    provider: &ProviderId,
    handout: Handout,
) -> ConnectLink {
    let handed = (provider, Access::Read, handout);
    let (_, sealed, expires_at) = new_ticket(rounds, principal, handed, unix_now());
    ConnectLink {
        url: link(rounds.tools.public_url, &sealed),
        expires_at,
    }
}

/// A link about to expire is renewed rather than offered again.
const RENEW_LINK_BEFORE_SECS: i64 = 120;

/// Another round for a sign-in still pending: the same link (unless it is about to expire),
/// a freshly sealed state.
pub(crate) fn repeat_round(
    rounds: &Rounds<'_>,
    principal: &Principal,
    claims: &StateClaims,
) -> InputRequired {
    let now = unix_now();
    let mut claims = claims.clone();
    if claims.ticket_expires_at - now < RENEW_LINK_BEFORE_SECS {
        let handed = (&claims.provider, claims.access, Handout::Waits);
        let (ticket, sealed, expires_at) = new_ticket(rounds, principal, handed, now);
        claims.sealed_ticket = sealed;
        claims.ticket_id = ticket.id;
        claims.ticket_expires_at = expires_at;
    }
    input_required(rounds, &claims, None, now)
}

/// A new sign-in ticket for `provider` (a connection serving `access`, its link handed out as
/// `handout` says), sealed, and when it expires.
fn new_ticket(
    rounds: &Rounds<'_>,
    principal: &Principal,
    (provider, access, handout): (&ProviderId, Access, Handout),
    now: i64,
) -> (Ticket, String, i64) {
    let ttl = rounds.settings.request_state_ttl_secs;
    let ticket = Ticket::for_access(principal, provider, access, handout);
    let sealed = ticket.seal(rounds.sealer, now, ttl);
    (ticket, sealed, now + ttl)
}

/// The provider's name as people know it.
pub(crate) fn display_name<'a>(rounds: &Rounds<'a>, provider: &ProviderId) -> &'a str {
    rounds
        .tools
        .catalog
        .get(provider)
        .map(|p| p.display_name.as_str())
        .unwrap_or("billing")
}

/// A legacy-era (2025-11-25) URL elicitation, sent as `-32042`: it names its sign-in by
/// `elicitation_id` (the ticket's id) so the client can match `notifications/elicitation/
/// complete` to it. Nothing is written; a retry that finds no grant gets a fresh one.
pub(crate) struct UrlElicitation {
    pub(crate) elicitation_id: String,
    pub(crate) provider: ProviderId,
    /// What the sign-in asks for: a write-access one is complete when its own flow is.
    pub(crate) access: Access,
    pub(crate) url: String,
    pub(crate) message: String,
}

pub(crate) fn url_elicitation(
    rounds: &Rounds<'_>,
    principal: &Principal,
    wanted: Wanted<'_>,
) -> UrlElicitation {
    let (provider, access) = (wanted.provider, wanted.access);
    // Whether the client retries by itself once told the sign-in is done is its own affair.
    let handed = (provider, access, Handout::Unsaid);
    let (ticket, sealed, _) = new_ticket(rounds, principal, handed, unix_now());
    UrlElicitation {
        elicitation_id: ticket.id,
        provider: provider.clone(),
        access,
        url: link(rounds.tools.public_url, &sealed),
        message: connect_message(rounds, provider, access, wanted.reason),
    }
}

fn input_required(
    rounds: &Rounds<'_>,
    claims: &StateClaims,
    reason: Option<ReauthReason>,
    now: i64,
) -> InputRequired {
    let elicitation = Elicitation::Url {
        message: connect_message(rounds, &claims.provider, claims.access, reason),
        url: link(rounds.tools.public_url, &claims.sealed_ticket),
    };
    let sealed = claims.seal(rounds.sealer, now, rounds.settings.request_state_ttl_secs);
    InputRequired::one(
        input_key(&claims.provider),
        InputRequest::Elicit(elicitation),
        Some(sealed),
    )
}

/// What the user answered to the sign-in request, as the retry reports it.
pub(crate) enum Answer {
    /// `accept`, or no answer for our key (a client that just retried).
    Proceed,
    Refused(String),
}

pub(crate) fn answer(
    input_responses: Option<&Map<String, Value>>,
    provider: &ProviderId,
) -> Answer {
    let action = input_responses
        .and_then(|r| r.get(&input_key(provider)))
        .and_then(|r| r.get("action"))
        .and_then(Value::as_str);
    match action {
        Some(action @ ("decline" | "cancel")) => Answer::Refused(action.to_owned()),
        _ => Answer::Proceed,
    }
}

/// The result for a refused sign-in: nothing was connected or stored.
pub(crate) fn not_connected(rounds: &Rounds<'_>, provider: &ProviderId, why: &str) -> ToolResult {
    let name = display_name(rounds, provider);
    ToolResult::error(format!(
        "The {name} account was not connected ({why}), so this could not be done. \
         Ask again whenever you want to connect it."
    ))
}

/// The result for a caller with no person behind its token: no link, since nobody could
/// open it; nothing was started or stored.
pub(crate) fn no_person_to_sign_in(
    rounds: &Rounds<'_>,
    tool: Tool,
    provider: &ProviderId,
) -> ToolResult {
    let name = display_name(rounds, provider);
    ToolResult::error(format!(
        "{} needs a connected {name} account, and no person can sign in for this caller: its \
         access token was issued to a client (client credentials or a scheduled agent), not to \
         a person, so no sign-in link was made and nothing was changed. A person connects \
         {name} from a client they use themselves; for this caller to use that connection, an \
         operator gives it a token issued to that person (the authorization code flow, or a \
         token exchange on their behalf) instead of its own.",
        tool.name()
    ))
}

/// The answer when the link was never opened: a link for the model to give the person. A
/// fresh one: the call ends here, so nothing waits for this sign-in, and its page tells the
/// person to ask again. Nothing was written.
pub(crate) fn never_opened(
    rounds: &Rounds<'_>,
    principal: &Principal,
    claims: &StateClaims,
) -> ToolResult {
    let name = display_name(rounds, &claims.provider);
    let handed = (&claims.provider, claims.access, Handout::AskAgain);
    let (_, sealed, _) = new_ticket(rounds, principal, handed, unix_now());
    ToolResult::error(format!(
        "The user has not opened the sign-in page: the client did not show them the link. \
         Give the user this link to connect their {name} account (it works only for them), \
         then ask again once they say it is connected: {}",
        link(rounds.tools.public_url, &sealed)
    ))
}
