//! Which account: a plain tool's call that could use several connected accounts at a
//! provider, and named none, asks the person in one form-mode round (a single select of the
//! accounts); the call then runs with the answer as its `account` argument.
//!
//! The round's state (sealed, purpose "account choice") is bound to the caller and the
//! original arguments, and carries the ids offered: an answer outside them changes nothing
//! and is asked again. A client that cannot show a form is told which accounts there are.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::round_state;
use crate::providers::{Account, Provider};
use crate::seal::Purpose;
use crate::tools::{Call, ToolResult, target};

/// The key of the question among a round's `inputRequests` (and of its answer).
pub(super) const REQUEST_KEY: &str = "account_choice";
const CHOICE_TTL_SECS: i64 = 1800;

#[derive(Serialize, Deserialize)]
struct ChoiceClaims {
    #[serde(flatten)]
    binding: round_state::Binding,
    /// The account ids the form offered.
    #[serde(rename = "o")]
    offered: Vec<String>,
}

impl round_state::Bound for ChoiceClaims {
    fn binding(&self) -> &round_state::Binding {
        &self.binding
    }
}

/// What the person answered.
pub(super) enum Choice {
    /// This account id, one of those offered: run the call with it.
    Chose(String),
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
pub(super) fn ask(call: &Call<'_>, provider: &Provider, accounts: &[Account], now: i64) -> Value {
    let claims = ChoiceClaims {
        binding: round_state::Binding::new(call.principal, call.arguments),
        offered: accounts.iter().map(|a| a.id.clone()).collect(),
    };
    let sealed =
        call.state
            .sealer
            .seal_timed(Purpose::AccountChoice, b"", &claims, now, CHOICE_TTL_SECS);
    let lang = call.state.config.default_language;
    let name = provider.display_name.as_str();
    let options: Vec<Value> = accounts
        .iter()
        .map(|a| json!({"const": a.id, "title": a.name}))
        .collect();
    json!({
        "resultType": "input_required",
        "inputRequests": {
            REQUEST_KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": lang.t_with("mcp-choose-account", &[("provider", name)]),
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "account": {
                                "type": "string",
                                "title": lang.t_with("mcp-choose-account-field", &[("provider", name)]),
                                "oneOf": options,
                            }
                        },
                        "required": ["account"],
                    }
                }
            }
        },
        "requestState": sealed,
    })
}

/// Opens the round's state (bound to this caller and these arguments) and reads the answer.
pub(super) fn answered(
    call: &Call<'_>,
    sealed: &str,
    responses: Option<&Map<String, Value>>,
    now: i64,
) -> Result<Choice, rmcp::model::ErrorData> {
    let claims: ChoiceClaims = round_state::open(call, Purpose::AccountChoice, sealed, now)?;
    let answer = responses
        .and_then(|r| r.get(REQUEST_KEY))
        .cloned()
        .unwrap_or(Value::Null);
    if answer["action"].as_str() != Some("accept") {
        return Ok(Choice::Declined);
    }
    Ok(match answer["content"]["account"].as_str() {
        Some(id) if claims.offered.iter().any(|o| o == id) => Choice::Chose(id.to_owned()),
        _ => Choice::Invalid,
    })
}

/// The answer to a declined or cancelled choice.
pub(super) fn declined() -> ToolResult {
    ToolResult::text("No account was chosen, so nothing was done.")
}

/// The answer for a client that cannot ask the person: the accounts, to name one.
pub(super) fn without_form(provider: &Provider, accounts: &[Account]) -> ToolResult {
    ToolResult::error(format!(
        "Several {} accounts are connected and the call named none. {}",
        provider.display_name,
        target::which_accounts(provider, accounts)
    ))
}
