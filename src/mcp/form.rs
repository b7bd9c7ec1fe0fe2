//! Form rounds for `create_invoice`: a call with missing or invalid fields does not fail; it
//! asks for exactly those fields (one form-mode elicitation quoting each problem) and keeps
//! the rest. A correction that is still invalid is asked again, as many rounds as needed.
//!
//! What the user already gave travels in the sealed `requestState` (purpose "form state",
//! bound to the caller, the tool and the original arguments), so any replica can finish the
//! call and a tampered state does not open. The idempotency key is chosen at the first round
//! and travels the same way: a retried final round creates nothing new. A client that cannot
//! ask a person gets a tool error naming each invalid field instead.

use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::answers::{complete, from_json, tool_error};
use super::capabilities::declares_form_elicitation;
use super::request_state::arguments_digest;
use super::round_state;
use crate::clock::unix_now;
use crate::identity::Principal;
use crate::seal::{Purpose, digest, random_id};
use crate::state::AppState;
use crate::tools::invoice_draft::{self, Problem};
use crate::tools::{ToolResult, invoices_write};

/// The `inputRequests` key of the form.
const KEY: &str = "invoice_details";
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

pub fn runs_in_rounds(tool: &str) -> bool {
    tool == invoices_write::CREATE
}

pub async fn run(
    state: &AppState,
    principal: &Principal,
    arguments: &Map<String, Value>,
    params: &CallToolRequestParams,
    capabilities: &Value,
) -> Result<CallToolResponse, ErrorData> {
    if let Some(unknown) = arguments
        .keys()
        .find(|k| *k != "provider" && !invoice_draft::FIELDS.contains(&k.as_str()))
    {
        return Err(tool_error(crate::tools::ToolError::InvalidArguments(
            format!("unknown argument `{unknown}`"),
        )));
    }
    let now = unix_now();
    let (values, idempotency_key) = match params.request_state.as_deref() {
        Some(sealed) => {
            let claims: FormClaims =
                round_state::open(state, Purpose::FormState, sealed, principal, arguments, now)?;
            let answer = answer(params);
            match answer["action"].as_str() {
                Some("accept") => {}
                _ => return Ok(complete(ToolResult::text("Creation cancelled."))),
            }
            let mut values = claims.values;
            for field in &claims.asked {
                if let Some(value) = answer["content"].get(field) {
                    values.insert(field.clone(), value.clone());
                }
            }
            (values, claims.idempotency_key)
        }
        None => {
            let mut values = arguments.clone();
            values.remove("provider");
            // A client retrying an identical valid call within ten minutes gets the same
            // invoice back, not a second one.
            let window = (now / 600).to_string();
            let key = digest(
                "grantry/create-invoice/v1",
                &[
                    principal.tag().as_bytes(),
                    arguments_digest(arguments).as_bytes(),
                    window.as_bytes(),
                ],
            );
            (values, key)
        }
    };
    let target = match invoices_write::target(state, principal, arguments)
        .await
        .map_err(tool_error)?
    {
        Ok(target) => target,
        Err(answer) => return Ok(complete(answer)),
    };
    let problems = match invoice_draft::validate(&values) {
        Ok(new) => {
            let done = invoices_write::create(state, &target, &new, &idempotency_key).await;
            return Ok(complete(done));
        }
        Err(problems) => problems,
    };
    if !declares_form_elicitation(capabilities) {
        return Ok(complete(ToolResult::error(format!(
            "The invoice was not created: {}",
            problems
                .iter()
                .map(|p| format!("`{}`: {}", p.field, p.message))
                .collect::<Vec<_>>()
                .join(" ")
        ))));
    }
    // A new key for a new form flow; a continuing one keeps its key.
    let idempotency_key = if params.request_state.is_some() {
        idempotency_key
    } else {
        random_id()
    };
    Ok(CallToolResponse::InputRequired(from_json(ask(
        state,
        principal,
        arguments,
        values,
        &problems,
        idempotency_key,
        now,
    ))))
}

/// The form asking for exactly the fields in `problems`, quoting each problem.
fn ask(
    state: &AppState,
    principal: &Principal,
    arguments: &Map<String, Value>,
    mut values: Map<String, Value>,
    problems: &[Problem],
    idempotency_key: String,
    now: i64,
) -> Value {
    let asked: Vec<String> = problems.iter().map(|p| p.field.to_owned()).collect();
    for field in &asked {
        values.remove(field); // a field asked again is not kept half-valid
    }
    let properties: Map<String, Value> = asked
        .iter()
        .map(|f| (f.clone(), invoice_draft::field_schema(f)))
        .collect();
    let required: Vec<String> = asked
        .iter()
        .filter(|f| *f != "description")
        .cloned()
        .collect();
    let message = format!(
        "To create the invoice, grantry needs:\n{}",
        problems
            .iter()
            .map(|p| format!(
                "- {}: {}",
                invoice_draft::field_schema(p.field)["title"]
                    .as_str()
                    .unwrap_or(p.field),
                p.message
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let claims = FormClaims {
        binding: round_state::Binding::new(principal, arguments),
        values,
        asked,
        idempotency_key,
    };
    json!({
        "resultType": "input_required",
        "inputRequests": {
            KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": properties,
                        "required": required,
                    }
                }
            }
        },
        "requestState": state.sealer.seal_timed(Purpose::FormState, b"", &claims, now, FORM_TTL_SECS),
    })
}

/// The answer to the form, as JSON (`Null` when there is none).
fn answer(params: &CallToolRequestParams) -> Value {
    params
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(KEY))
        .and_then(|answer| serde_json::to_value(answer).ok())
        .unwrap_or(Value::Null)
}
