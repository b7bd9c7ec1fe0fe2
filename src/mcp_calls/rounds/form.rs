//! Form rounds for any [`FormTool`] (`create_invoice`): a call with missing or invalid fields
//! does not fail; it asks for exactly those fields (one form-mode elicitation quoting each
//! problem) and keeps the rest. A correction that is still invalid is asked again, as many
//! rounds as needed.
//!
//! What the user already gave travels in the sealed `requestState` (purpose "form state",
//! bound to the caller, the tool and the original arguments), so any replica can finish the
//! call and a tampered state does not open. The idempotency key is chosen at the first round
//! and travels the same way: a retried final round creates nothing new. A client that cannot
//! ask a person gets a tool error naming each invalid field instead.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::identity::PrincipalTag;
use crate::ids::AccountId;
use crate::mcp_calls::results::{CallAnswer, Elicitation, InputRequest, InputRequired};
use crate::mcp_calls::rounds::Retry;
use crate::mcp_calls::rounds::RoundCall;
use crate::mcp_calls::rounds::request_state::ArgumentsDigest;
use crate::mcp_calls::rounds::round_state;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::seal::{Purpose, digest, random_id};
use crate::tools::{Attempt, FormTool, Problem, Tool};
use grantry_base::clock::unix_now;

const FORM_TTL_SECS: i64 = 1800;

#[derive(Serialize, Deserialize)]
struct FormClaims {
    #[serde(flatten)]
    binding: round_state::Binding,
    /// The fields given and valid so far.
    #[serde(rename = "v")]
    values: Map<String, Value>,
    /// The fields the last form asked for: only those are taken from its answer.
    #[serde(rename = "q")]
    asked: Vec<String>,
    #[serde(rename = "k")]
    idempotency_key: String,
}

impl round_state::Bound for FormClaims {
    fn binding(&self) -> &round_state::Binding {
        &self.binding
    }
}

/// One call of the form tool `tool`, through its rounds.
pub(super) async fn run(
    call: &RoundCall<'_>,
    tool: Tool,
    form: &dyn FormTool,
    retry: &Retry,
    capabilities: Capabilities,
) -> Result<CallAnswer, RpcError> {
    let now = unix_now();
    let (values, idempotency_key, chosen) = match standing(call, tool, form, retry, now).await? {
        Standing::Attempt(values, key, chosen) => (values, key, chosen),
        Standing::Answered(answer) => return Ok(answer),
    };
    // At the account the person chose in an earlier round, if they were asked.
    let call = &call.at(chosen.as_ref().or(call.chosen_account));
    let problems = match form.attempt(call, &values, &idempotency_key).await? {
        Attempt::Done(result) => return Ok(result.into()),
        Attempt::Problems(problems) => problems,
    };
    if !capabilities.form_elicitation {
        return Ok(form.without_form(&problems).into());
    }
    // A new key for a new form flow; a continuing one keeps its key.
    let idempotency_key = if retry.request_state.is_some() {
        idempotency_key
    } else {
        random_id()
    };
    let round = Round {
        values,
        problems: &problems,
        idempotency_key,
        now,
    };
    Ok(CallAnswer::InputRequired(ask(call, form, round)))
}

/// Where a call's rounds stand before its attempt.
enum Standing {
    /// Attempt with these values under this idempotency key (and the account the person
    /// chose in an earlier round, if any).
    Attempt(Map<String, Value>, String, Option<AccountId>),
    /// Answered already (a declined form, a precheck's answer).
    Answered(CallAnswer),
}

/// The values so far: the call's arguments on the first round; on a later one, the sealed
/// values with the fields the last form asked for taken from its answer.
async fn standing(
    call: &RoundCall<'_>,
    tool: Tool,
    form: &dyn FormTool,
    retry: &Retry,
    now: i64,
) -> Result<Standing, RpcError> {
    let Some(sealed) = retry.request_state.as_deref() else {
        if let Some(answer) = form.precheck(call).await? {
            return Ok(Standing::Answered(answer.into()));
        }
        return Ok(Standing::Attempt(
            form.values(),
            first_round_key(call, tool, now),
            None,
        ));
    };
    let claims: FormClaims = round_state::open(call, Purpose::FormState, sealed, now)?;
    let answer = retry.response(form.request_key());
    if answer["action"].as_str() != Some("accept") {
        return Ok(Standing::Answered(form.cancelled().into()));
    }
    let mut values = claims.values;
    for field in &claims.asked {
        if let Some(value) = answer["content"].get(field) {
            values.insert(field.clone(), value.clone());
        }
    }
    let chosen = claims.binding.chosen_account().cloned();
    Ok(Standing::Attempt(values, claims.idempotency_key, chosen))
}

/// The idempotency key of a call that needs no form: a client retrying an identical valid
/// call within ten minutes gets the same result back, not a second one.
fn first_round_key(call: &RoundCall<'_>, tool: Tool, now: i64) -> String {
    let of = (&call.principal.tag(), &ArgumentsDigest::of(call.arguments));
    idempotency_key(tool, of, call.chosen_account, now)
}

/// One key per tool, caller, arguments, account chosen in a round (the client's arguments
/// do not name it) and ten minutes.
fn idempotency_key(
    tool: Tool,
    (principal, arguments): (&PrincipalTag, &ArgumentsDigest),
    chosen: Option<&AccountId>,
    now: i64,
) -> String {
    let window = (now / 600).to_string();
    digest(
        &format!("grantry/{}/v1", tool.name().replace('_', "-")),
        &[
            principal.as_bytes(),
            arguments.as_str().as_bytes(),
            AccountId::text(chosen).as_bytes(),
            window.as_bytes(),
        ],
    )
}

/// What the next form carries forward.
struct Round<'a> {
    values: Map<String, Value>,
    problems: &'a [Problem],
    idempotency_key: String,
    now: i64,
}

/// The form asking for exactly the fields in `round.problems`, quoting each problem.
fn ask(call: &RoundCall<'_>, form: &dyn FormTool, round: Round<'_>) -> InputRequired {
    let Round {
        mut values,
        problems,
        idempotency_key,
        now,
    } = round;
    let lang = call.rounds.tools.language;
    let asked: Vec<String> = problems.iter().map(|p| p.field.to_owned()).collect();
    for field in &asked {
        values.remove(field); // a field asked again is not kept half-valid
    }
    let properties: Map<String, Value> = asked
        .iter()
        .map(|f| (f.clone(), form.field_schema(f, lang)))
        .collect();
    let required: Vec<&String> = asked.iter().filter(|f| !form.optional(f)).collect();
    let claims = FormClaims {
        binding: round_state::Binding::new(call),
        values,
        asked: asked.clone(),
        idempotency_key,
    };
    let sealed =
        call.rounds
            .sealer
            .seal_timed(Purpose::FormState, b"", &claims, now, FORM_TTL_SECS);
    let elicitation = Elicitation::Form {
        message: form.form_message(problems, lang, call.rounds.tools.brand),
        requested_schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
        }),
    };
    InputRequired::one(
        form.request_key(),
        InputRequest::Elicit(elicitation),
        Some(sealed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Principal;

    #[test]
    fn a_first_round_key_is_one_per_call_and_per_account_chosen() {
        let principal = Principal {
            issuer: "urn:test".into(),
            subject: "alice".into(),
        };
        let tag = principal.tag();
        let arguments = ArgumentsDigest::of_wire(&Map::new());
        let key = |chosen: Option<&str>, now| {
            let chosen = chosen.and_then(AccountId::given);
            idempotency_key(
                Tool::CreateInvoice,
                (&tag, &arguments),
                chosen.as_ref(),
                now,
            )
        };
        let now = 1_800_000_000;
        assert_eq!(
            key(None, now),
            key(None, now + 1),
            "a retry within the window"
        );
        assert_eq!(key(Some("acme"), now), key(Some("acme"), now));
        // The same call at another account the person chose is another invoice.
        assert_ne!(key(Some("acme"), now), key(Some("globex"), now));
        assert_ne!(key(Some("acme"), now), key(None, now));
        assert_ne!(key(None, now), key(None, now + 600), "the next window");
    }
}
