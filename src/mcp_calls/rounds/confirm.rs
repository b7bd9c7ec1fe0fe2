//! Confirmation rounds for destructive tools (any [`ConfirmTool`]): nothing happens until the
//! user has answered a form-mode elicitation with `accept` and `confirm: true`.
//!
//! The first call answers `input_required` with the tool's question and a sealed
//! `requestState` (purpose "confirm state": the caller's tag, the tool, the argument digest,
//! and exactly what is confirmed: which connection, which invoice), so any replica can take
//! the answer, and an answer cannot be replayed by someone else, for other arguments, or
//! against something else since. A client that cannot ask a person gets a tool error saying
//! nothing was changed and why (or -32021 under `--no-url-elicitation spec`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::NoUrlElicitation;
use crate::mcp_calls::results::{CallAnswer, Elicitation, InputRequest, InputRequired};
use crate::mcp_calls::rounds::Retry;
use crate::mcp_calls::rounds::RoundCall;
use crate::mcp_calls::rounds::round_state;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::seal::Purpose;
use crate::tools::{ConfirmTool, Prepared, Question, Subject, Tool, ToolResult};
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

/// One call of the destructive tool `tool`, through its confirmation round.
pub(super) async fn run(
    call: &RoundCall<'_>,
    tool: Tool,
    confirm: &dyn ConfirmTool,
    retry: &Retry,
    capabilities: Capabilities,
) -> Result<CallAnswer, RpcError> {
    if capabilities.no_person {
        return Ok(no_person_to_confirm(tool).into());
    }
    if !capabilities.form_elicitation {
        return cannot_ask(call, tool);
    }
    let now = unix_now();
    if let Some(sealed) = retry.request_state.as_deref() {
        let claims: ConfirmClaims = round_state::open(call, Purpose::ConfirmState, sealed, now)?;
        if claims.tool != tool.name() {
            return Err(RpcError::invalid_request_state());
        }
        if !confirmed(retry) {
            return Ok(confirm.cancelled().into());
        }
        // At the account the person chose before the question, if they were asked.
        let call = call.at(claims.binding.chosen_account());
        return Ok(confirm.execute(&call, &claims.subject).await?.into());
    }
    match confirm.prepare(call).await? {
        Prepared::Done(result) => Ok(result.into()),
        Prepared::Ask(question) => Ok(CallAnswer::InputRequired(ask(call, tool, question, now))),
    }
}

/// The answer to a client that cannot ask its person: nothing is changed. A tool error the
/// model reads, or `-32021` under `--no-url-elicitation spec`.
fn cannot_ask(call: &RoundCall<'_>, tool: Tool) -> Result<CallAnswer, RpcError> {
    let why = format!(
        "{} asks the user to confirm first, and this client cannot show the user a \
         confirmation (form-mode elicitation); nothing was changed. The user can do it from a \
         client that can, or through `grantry bridge`",
        tool.name()
    );
    match call.rounds.settings.no_url_elicitation {
        NoUrlElicitation::Spec => Err(RpcError::missing_capability(
            why,
            json!({"elicitation": {"form": {}}}),
        )),
        NoUrlElicitation::Link => Ok(ToolResult::error(format!("{why}.")).into()),
    }
}

/// The answer to a caller with no person behind its token: nobody can say yes.
fn no_person_to_confirm(tool: Tool) -> ToolResult {
    ToolResult::error(format!(
        "{} asks a person to confirm first, and no person is behind this caller (its access \
         token was issued to a client, not to a person); nothing was changed. A person can do \
         it from a client they use themselves.",
        tool.name()
    ))
}

/// The `input_required` answer asking `question`.
fn ask(call: &RoundCall<'_>, tool: Tool, question: Question, now: i64) -> InputRequired {
    let claims = ConfirmClaims {
        binding: round_state::Binding::new(call),
        tool: tool.name().to_owned(),
        subject: question.subject,
    };
    let sealed =
        call.rounds
            .sealer
            .seal_timed(Purpose::ConfirmState, b"", &claims, now, CONFIRM_TTL_SECS);
    let checkbox = call.rounds.tools.language.t("mcp-confirm-checkbox");
    let form = Elicitation::Form {
        message: question.message,
        requested_schema: json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": question.title, "description": checkbox}
            },
            "required": ["confirm"]
        }),
    };
    InputRequired::one(KEY, InputRequest::Elicit(form), Some(sealed))
}

/// Only an explicit `accept` carrying `confirm: true` counts; anything else is a no.
fn confirmed(retry: &Retry) -> bool {
    let answer = retry.response(KEY);
    answer["action"] == "accept" && answer["content"]["confirm"] == Value::Bool(true)
}
