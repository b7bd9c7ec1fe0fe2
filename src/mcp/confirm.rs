//! Confirmation rounds for destructive tools (`disconnect_account`): nothing happens until the
//! user has answered a form-mode elicitation with `accept` and `confirm: true`.
//!
//! The first call answers `input_required` with the question and a sealed `requestState`
//! (purpose "confirm state": the caller's tag, the tool, the argument digest, the provider and
//! which connection), so any replica can take the answer, and an answer cannot be replayed by
//! someone else, for other arguments, or against a connection made since. A client that cannot
//! ask a person gets -32021: the safe outcome is that nothing is removed.

use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorCode, ErrorData};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::handler::{complete, from_json, invalid_request_state};
use super::request_state::arguments_digest;
use crate::clock::unix_now;
use crate::identity::Principal;
use crate::seal::{Purpose, constant_time_eq};
use crate::state::AppState;
use crate::tools::{ToolResult, disconnect};

/// The `inputRequests` key of the confirmation.
const KEY: &str = "confirm";
/// How long a confirmation question stays answerable.
const CONFIRM_TTL_SECS: i64 = 600;

#[derive(Serialize, Deserialize)]
struct ConfirmClaims {
    #[serde(rename = "p")]
    principal_tag: String,
    #[serde(rename = "n")]
    tool: String,
    #[serde(rename = "a")]
    arguments_digest: String,
    #[serde(rename = "v")]
    provider: String,
    #[serde(rename = "c")]
    connected_at: i64,
}

/// Whether `tool` runs only after a confirmation round.
pub fn needs_confirmation(tool: &str) -> bool {
    tool == disconnect::NAME
}

/// One call of a destructive tool, through its confirmation round.
pub async fn run(
    state: &AppState,
    principal: &Principal,
    tool: &str,
    arguments: &Map<String, Value>,
    params: &CallToolRequestParams,
    capabilities: &Value,
) -> Result<CallToolResponse, ErrorData> {
    if !declares_form_elicitation(capabilities) {
        return Err(ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "{tool} asks the user to confirm first and needs a client that supports \
                 form-mode elicitation; nothing was changed"
            ),
            Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
        ));
    }
    let provider = disconnect::provider(state, arguments).map_err(super::handler::tool_error)?;
    let now = unix_now();
    if let Some(sealed) = params.request_state.as_deref() {
        let claims: ConfirmClaims = state
            .sealer
            .open_timed(Purpose::ConfirmState, b"", sealed, now)
            .map_err(|e| {
                tracing::info!(reason = %e, "confirmation state refused");
                invalid_request_state()
            })?;
        let same_request = constant_time_eq(&claims.principal_tag, &principal.tag())
            && claims.tool == tool
            && claims.arguments_digest == arguments_digest(arguments)
            && claims.provider == provider.id;
        if !same_request {
            tracing::info!(principal = %principal.tag(), "confirmation state for another request");
            return Err(invalid_request_state());
        }
        if !confirmed(params) {
            return Ok(complete(ToolResult::text(
                "Disconnect cancelled; nothing was removed.",
            )));
        }
        let done = disconnect::execute(state, principal, provider, claims.connected_at)
            .await
            .map_err(super::handler::tool_error)?;
        return Ok(complete(done));
    }
    let question = match disconnect::prepare(state, principal, provider)
        .await
        .map_err(super::handler::tool_error)?
    {
        Ok(question) => question,
        Err(nothing_to_do) => return Ok(complete(nothing_to_do)),
    };
    let claims = ConfirmClaims {
        principal_tag: principal.tag(),
        tool: tool.to_owned(),
        arguments_digest: arguments_digest(arguments),
        provider: provider.id.clone(),
        connected_at: question.connected_at,
    };
    let sealed =
        state
            .sealer
            .seal_timed(Purpose::ConfirmState, b"", &claims, now, CONFIRM_TTL_SECS);
    Ok(CallToolResponse::InputRequired(from_json(json!({
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
                                "title": format!("Disconnect {}", question.provider.display_name),
                                "description": "Tick to disconnect. This cannot be undone."
                            }
                        },
                        "required": ["confirm"]
                    }
                }
            }
        },
        "requestState": sealed,
    }))))
}

/// Form elicitation is declared as `elicitation.form`, or by an `elicitation` object naming no
/// mode at all (the spec reads that as form mode).
fn declares_form_elicitation(capabilities: &Value) -> bool {
    let elicitation = &capabilities["elicitation"];
    let names_no_mode = elicitation.get("form").is_none() && elicitation.get("url").is_none();
    elicitation["form"].is_object() || (elicitation.is_object() && names_no_mode)
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
