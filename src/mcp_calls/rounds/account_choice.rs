//! Which account: a plain tool's call that could use several connected accounts at a
//! provider, and named none, asks the person in one form-mode round (a single select of the
//! accounts); the call then runs with the answer as its `account` argument.
//!
//! The tools with confirmation or form rounds ask the same question first ([`before_rounds`]),
//! and the account chosen travels in each later round's state (`round_state::Binding`).
//!
//! The round's state (sealed, purpose "account choice") is bound to the caller and the
//! original arguments, and carries the ids offered: an answer outside them changes nothing
//! and is asked again. A client that cannot show a form is told which accounts there are.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::connections::Choosable;
use crate::ids::AccountId;
use crate::mcp_calls::results::{CallAnswer, Elicitation, InputRequest, InputRequired};
use crate::mcp_calls::rounds::Retry;
use crate::mcp_calls::rounds::RoundCall;
use crate::mcp_calls::rounds::round_state;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::providers::Provider;
use crate::seal::Purpose;
use crate::tools::{self, ToolError, ToolResult, target};
use grantry_base::clock::unix_now;

/// The key of the question among a round's `inputRequests` (and of its answer).
pub(crate) const REQUEST_KEY: &str = "account_choice";
const CHOICE_TTL_SECS: i64 = 1800;

#[derive(Serialize, Deserialize)]
struct ChoiceClaims {
    #[serde(flatten)]
    binding: round_state::Binding,
    /// The account ids the form offered.
    #[serde(rename = "o")]
    offered: Vec<AccountId>,
}

impl round_state::Bound for ChoiceClaims {
    fn binding(&self) -> &round_state::Binding {
        &self.binding
    }
}

/// What the person answered.
pub(super) enum Choice {
    /// This account id, one of those offered: run the call with it.
    Chose(AccountId),
    /// Declined or cancelled: nothing is done.
    Declined,
    /// Accepted with none of the accounts offered: asked again.
    Invalid,
}

/// Whether a retry answers an account choice (rather than a sign-in round).
pub(super) fn is_answer(responses: Option<&Map<String, Value>>) -> bool {
    responses.is_some_and(|r| r.contains_key(REQUEST_KEY))
}

/// The `input_required` result asking which of `accounts` at `provider` to use.
pub(super) fn ask(
    call: &RoundCall<'_>,
    provider: &Provider,
    accounts: &[Choosable],
    now: i64,
) -> InputRequired {
    let claims = ChoiceClaims {
        binding: round_state::Binding::new(call),
        offered: accounts.iter().map(|c| c.account.id.clone()).collect(),
    };
    let sealed =
        call.rounds
            .sealer
            .seal_timed(Purpose::AccountChoice, b"", &claims, now, CHOICE_TTL_SECS);
    let lang = call.rounds.tools.language;
    let name = provider.display_name.as_str();
    // A broken account is marked in words: a form's options carry nothing else.
    let options: Vec<Value> = accounts
        .iter()
        .map(|c| {
            let name = c.account.name.as_str();
            let title = if c.needs_reauth {
                lang.t_with("mcp-choose-account-broken", &[("account", name)])
            } else {
                name.to_owned()
            };
            json!({"const": c.account.id, "title": title})
        })
        .collect();
    let form = Elicitation::Form {
        message: lang.t_with("mcp-choose-account", &[("provider", name)]),
        requested_schema: json!({
            "type": "object",
            "properties": {
                "account": {
                    "type": "string",
                    "title": lang.t_with("mcp-choose-account-field", &[("provider", name)]),
                    "oneOf": options,
                }
            },
            "required": ["account"],
        }),
    };
    InputRequired::one(REQUEST_KEY, InputRequest::Elicit(form), Some(sealed))
}

/// Opens the round's state (bound to this caller and these arguments) and reads the answer.
pub(super) fn answered(
    call: &RoundCall<'_>,
    sealed: &str,
    responses: Option<&Map<String, Value>>,
    now: i64,
) -> Result<Choice, RpcError> {
    let claims: ChoiceClaims = round_state::open(call, Purpose::AccountChoice, sealed, now)?;
    let answer = responses
        .and_then(|r| r.get(REQUEST_KEY))
        .cloned()
        .unwrap_or(Value::Null);
    if answer["action"].as_str() != Some("accept") {
        return Ok(Choice::Declined);
    }
    Ok(match answer["content"]["account"].as_str() {
        Some(id) => match claims.offered.iter().find(|o| *o == id) {
            Some(offered) => Choice::Chose(offered.clone()),
            None => Choice::Invalid,
        },
        _ => Choice::Invalid,
    })
}

/// Where a call of a tool with rounds stands on its account, before its own rounds.
pub(super) enum Before {
    /// Go on, at the account chosen just now if any; `fresh`: the retry answered this
    /// question, so the tool's own rounds start from their first.
    Proceed {
        chosen: Option<AccountId>,
        fresh: bool,
    },
    /// Answered here: the question, or a declined one.
    Answer(CallAnswer),
}

/// Asks which account when a first round names none and several are connected at the
/// provider (and the client can show a form; if not, the tool itself refuses with the list).
pub(super) async fn before_rounds(
    call: &RoundCall<'_>,
    retry: &Retry,
    capabilities: Capabilities,
) -> Result<Before, RpcError> {
    let now = unix_now();
    let responses = retry.responses.as_ref();
    let mut fresh = false;
    if let Some(sealed) = retry.request_state.as_deref()
        && is_answer(responses)
    {
        match answered(call, sealed, responses, now)? {
            Choice::Chose(account) => {
                return Ok(Before::Proceed {
                    chosen: Some(account),
                    fresh: true,
                });
            }
            Choice::Declined => return Ok(Before::Answer(declined().into())),
            Choice::Invalid => fresh = true,
        }
    }
    let first_round = retry.request_state.is_none() || fresh;
    if first_round
        && capabilities.form_elicitation
        && let Some((provider, accounts)) = ambiguous(call).await?
    {
        let question = ask(call, provider, &accounts, now);
        return Ok(Before::Answer(CallAnswer::InputRequired(question)));
    }
    Ok(Before::Proceed {
        chosen: None,
        fresh,
    })
}

/// The provider and its accounts when the call names no account and several are connected.
async fn ambiguous<'a>(
    call: &RoundCall<'a>,
) -> Result<Option<(&'a Provider, Vec<Choosable>)>, ToolError> {
    let (named, account) = call.arguments.target();
    if account.is_some() || call.chosen_account.is_some() {
        return Ok(None);
    }
    // A provider that is not offered, or several connected: the tool says so itself.
    let Some(provider) = tools::unless_answered(target::provider(call, named).await)? else {
        return Ok(None);
    };
    Ok(
        match tools::unless_answered(target::account(call, provider, None).await)? {
            Some(target::Chosen::Ambiguous(accounts)) => Some((provider, accounts)),
            _ => None,
        },
    )
}

/// The answer to a declined or cancelled choice: a tool error, as a declined sign-in is
/// (a tool with an output schema answers its structured content or an error).
pub(super) fn declined() -> ToolResult {
    ToolResult::error(
        "No account was chosen, so nothing was done. To use one, call again with `account` \
         naming it.",
    )
}

/// The answer for a client that cannot ask the person: the accounts, to name one.
pub(super) fn without_form(provider: &Provider, accounts: &[Choosable]) -> ToolResult {
    ToolResult::error(format!(
        "Several {} accounts are connected and the call named none. {}",
        provider.display_name,
        target::which_accounts(provider, accounts)
    ))
}
