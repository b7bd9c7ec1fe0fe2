//! Confirmation rounds for destructive tools (any [`ConfirmTool`]): nothing happens until the
//! user has answered a form-mode elicitation with `accept` and `confirm: true`.
//!
//! The first call answers `input_required` with the tool's question and a sealed
//! `requestState` (purpose "confirm state": the caller's tag, the tool, the argument digest,
//! and exactly what is confirmed: which connection, which invoice), so any replica can take
//! the answer, and an answer cannot be replayed by someone else, for other arguments, or
//! against something else since. A client that cannot ask a person gets -32021: the safe
//! outcome is that nothing is changed.

use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::answers::{codes, complete, from_json, invalid_request_state, tool_error};
use super::capabilities::Capabilities;
use super::round_state;
use crate::seal::Purpose;
use crate::tools::{Call, ConfirmTool, Prepared, Question, Subject};
use grantry_base::clock::unix_now;

/// The `inputRequests` key of the confirmation.
const KEY: &str = "confirm";
/// How long a confirmation question stays answerable.
const CONFIRM_TTL_SECS: i64 = 600;

#[derive(Serialize, Deserialize)]
struct ConfirmClaims {
    #[serde(flatten)]
    binding: round_state::Binding,
    #[serde(rename = "n")]
    tool: String,
    #[serde(flatten)]
    subject: Subject,
}

impl round_state::Bound for ConfirmClaims {
    fn binding(&self) -> &round_state::Binding {
        &self.binding
    }
}

/// One call of a destructive tool named `tool`, through its confirmation round.
pub(super) async fn run(
    call: &Call<'_>,
    tool: &str,
    confirm: &dyn ConfirmTool,
    params: &CallToolRequestParams,
    capabilities: Capabilities,
) -> Result<CallToolResponse, ErrorData> {
    if !capabilities.form_elicitation {
        return Err(ErrorData::new(
            codes::MISSING_CAPABILITY,
            format!(
                "{tool} asks the user to confirm first and needs a client that supports \
                 form-mode elicitation; nothing was changed"
            ),
            Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
        ));
    }
    let now = unix_now();
    if let Some(sealed) = params.request_state.as_deref() {
        let claims: ConfirmClaims = round_state::open(call, Purpose::ConfirmState, sealed, now)?;
        if claims.tool != tool {
            return Err(invalid_request_state());
        }
        if !confirmed(params) {
            return Ok(complete(confirm.cancelled()));
        }
        // At the account the person chose before the question, if they were asked.
        let chosen = claims.binding.chosen_account();
        let arguments = chosen.map(|account| round_state::with_account(call.arguments, account));
        let call = Call {
            arguments: arguments.as_ref().unwrap_or(call.arguments),
            chosen_account: chosen,
            ..*call
        };
        let done = confirm.execute(&call, &claims.subject).await;
        return Ok(complete(done.map_err(tool_error)?));
    }
    match confirm.prepare(call).await.map_err(tool_error)? {
        Prepared::Done(result) => Ok(complete(result)),
        Prepared::Ask(question) => Ok(ask(call, tool, question, now)),
    }
}

/// The `input_required` answer asking `question`.
fn ask(call: &Call<'_>, tool: &str, question: Question, now: i64) -> CallToolResponse {
    let claims = ConfirmClaims {
        binding: round_state::Binding::new(call),
        tool: tool.to_owned(),
        subject: question.subject,
    };
    let sealed =
        call.state
            .sealer
            .seal_timed(Purpose::ConfirmState, b"", &claims, now, CONFIRM_TTL_SECS);
    CallToolResponse::InputRequired(from_json(json!({
        "resultType": "input_required",
        "inputRequests": {
            KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": question.message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "confirm": {
                                "type": "boolean",
                                "title": question.title,
                                "description": call.state.config.default_language.t("mcp-confirm-checkbox")
                            }
                        },
                        "required": ["confirm"]
                    }
                }
            }
        },
        "requestState": sealed,
    })))
}

/// Only an explicit `accept` carrying `confirm: true` counts; anything else is a no.
fn confirmed(params: &CallToolRequestParams) -> bool {
    let Some(responses) = params.input_responses.as_ref() else {
        return false;
    };
    let Some(answer) = responses.get(KEY) else {
        return false;
    };
    let answer = serde_json::to_value(answer).unwrap_or(Value::Null);
    answer["action"] == "accept" && answer["content"]["confirm"] == Value::Bool(true)
}
