//! Confirmation rounds for destructive tools (`disconnect_account`, `void_invoice`): nothing
//! happens until the user has answered a form-mode elicitation with `accept` and
//! `confirm: true`.
//!
//! The first call answers `input_required` with the question and a sealed `requestState`
//! (purpose "confirm state": the caller's tag, the tool, the argument digest, the provider and
//! what exactly is confirmed: which connection, which invoice), so any replica can take the
//! answer, and an answer cannot be replayed by someone else, for other arguments or another
//! invoice, or against a connection made since. A client that cannot ask a person gets
//! -32021: the safe outcome is that nothing is changed.

use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::answers::codes;
use super::answers::{complete, from_json, invalid_request_state, tool_error};
use super::capabilities::declares_form_elicitation;
use super::round_state;
use crate::clock::unix_now;
use crate::identity::Principal;
use crate::providers::invoice::InvoiceStatus;
use crate::seal::Purpose;
use crate::state::AppState;
use crate::tools::{ToolError, ToolResult, disconnect, invoices_write};

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
    #[serde(rename = "v")]
    provider: String,
    /// What is confirmed: the connection's creation time, or the invoice id.
    #[serde(rename = "s")]
    subject: String,
}

impl round_state::Bound for ConfirmClaims {
    fn binding(&self) -> &round_state::Binding {
        &self.binding
    }
}

/// What a confirmation is about, and what to ask.
struct Question {
    provider: String,
    subject: String,
    title: String,
    message: String,
}

/// Whether `tool` runs only after a confirmation round.
pub fn needs_confirmation(tool: &str) -> bool {
    tool == disconnect::NAME || tool == invoices_write::VOID
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
            codes::MISSING_CAPABILITY,
            format!(
                "{tool} asks the user to confirm first and needs a client that supports \
                 form-mode elicitation; nothing was changed"
            ),
            Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
        ));
    }
    let now = unix_now();
    let confirmed_claims = match params.request_state.as_deref() {
        None => None,
        Some(sealed) => {
            let claims: ConfirmClaims = round_state::open(
                state,
                Purpose::ConfirmState,
                sealed,
                principal,
                arguments,
                now,
            )?;
            if claims.tool != tool {
                return Err(invalid_request_state());
            }
            Some(claims)
        }
    };
    let outcome = if tool == disconnect::NAME {
        disconnect_round(
            state,
            principal,
            arguments,
            confirmed_claims.as_ref(),
            params,
        )
        .await
    } else {
        void_round(
            state,
            principal,
            arguments,
            confirmed_claims.as_ref(),
            params,
        )
        .await
    };
    match outcome.map_err(tool_error)? {
        Round::Done(result) => Ok(complete(result)),
        Round::Ask(question) => {
            let claims = ConfirmClaims {
                binding: round_state::Binding::new(principal, arguments),
                tool: tool.to_owned(),
                provider: question.provider,
                subject: question.subject,
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
                                        "title": question.title,
                                        "description": "Tick to go ahead. This cannot be undone."
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
    }
}

enum Round {
    Done(ToolResult),
    Ask(Question),
}

/// The state's claims, if they are about `provider` and `subject`; otherwise the wire error.
fn bound<'a>(
    claims: &'a ConfirmClaims,
    provider: &str,
    subject: Option<&str>,
) -> Result<&'a ConfirmClaims, ToolError> {
    let same = claims.provider == provider && subject.is_none_or(|s| s == claims.subject);
    if same {
        Ok(claims)
    } else {
        Err(ToolError::InvalidArguments(
            "the confirmation was given for something else".into(),
        ))
    }
}

async fn disconnect_round(
    state: &AppState,
    principal: &Principal,
    arguments: &Map<String, Value>,
    claims: Option<&ConfirmClaims>,
    params: &CallToolRequestParams,
) -> Result<Round, ToolError> {
    let provider = disconnect::provider(state, arguments)?;
    if let Some(claims) = claims {
        let claims = bound(claims, &provider.id, None)?;
        if !confirmed(params) {
            return Ok(Round::Done(ToolResult::text(
                "Disconnect cancelled; nothing was removed.",
            )));
        }
        let connected_at = claims.subject.parse().unwrap_or_default();
        return Ok(Round::Done(
            disconnect::execute(state, principal, provider, connected_at).await?,
        ));
    }
    Ok(
        match disconnect::prepare(state, principal, provider).await? {
            Err(nothing_to_do) => Round::Done(nothing_to_do),
            Ok(question) => Round::Ask(Question {
                provider: provider.id.clone(),
                subject: question.connected_at.to_string(),
                title: format!("Disconnect {}", provider.display_name),
                message: question.message,
            }),
        },
    )
}

async fn void_round(
    state: &AppState,
    principal: &Principal,
    arguments: &Map<String, Value>,
    claims: Option<&ConfirmClaims>,
    params: &CallToolRequestParams,
) -> Result<Round, ToolError> {
    let invoice_id = match arguments.get("invoice_id") {
        Some(Value::String(id)) if !id.is_empty() && id.len() <= 255 => id.clone(),
        _ => {
            return Err(ToolError::InvalidArguments(
                "invoice_id is required (a string, as list_invoices shows it)".into(),
            ));
        }
    };
    if let Some(other) = arguments
        .keys()
        .find(|k| *k != "invoice_id" && *k != "provider")
    {
        return Err(ToolError::InvalidArguments(format!(
            "unknown argument `{other}`; void_invoice takes invoice_id and provider"
        )));
    }
    let target = match invoices_write::target(state, principal, arguments).await? {
        Ok(target) => target,
        Err(answer) => return Ok(Round::Done(answer)),
    };
    if let Some(claims) = claims {
        bound(claims, &target.provider.id, Some(&invoice_id))?;
        if !confirmed(params) {
            return Ok(Round::Done(ToolResult::text(
                "Void cancelled; nothing was changed.",
            )));
        }
        return Ok(Round::Done(
            invoices_write::void(state, &target, &invoice_id).await,
        ));
    }
    let invoice = match invoices_write::find(state, &target, &invoice_id).await {
        Ok(invoice) => invoice,
        Err(answer) => return Ok(Round::Done(answer)),
    };
    if invoice.status == InvoiceStatus::Void {
        return Ok(Round::Done(ToolResult::text(format!(
            "Invoice {} is already void; nothing to do.",
            invoice.number
        ))));
    }
    Ok(Round::Ask(Question {
        provider: target.provider.id.clone(),
        subject: invoice_id,
        title: format!("Void invoice {}", invoice.number),
        message: invoices_write::void_question(&invoice),
    }))
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
