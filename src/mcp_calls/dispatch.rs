//! Where a tool call goes, in either era: the one function both the modern edge and the
//! legacy handler hand their [`ToolCall`] to. A plain tool runs through its sign-in rounds,
//! a tool with form or confirmation rounds through those, an extension's tool through the
//! extension; what differs between the eras is only how a round reaches the person
//! (`input_required`, or `-32042` and `elicitation/create` on a legacy session).

use std::collections::HashMap;

use crate::audit::Audit;
use crate::mcp_calls::call::{Boxed, Called, Era, ToolCall};
use crate::mcp_calls::extension::{Extension, ExtensionCall, Job, TaskSupport};
use crate::mcp_calls::registry::Registry;
use crate::mcp_calls::results::{CallAnswer, CallResult};
use crate::mcp_calls::rounds::plain_call::{LegacyAnswer, PlainCall};
use crate::mcp_calls::rounds::{self, Rounds};
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::describe::TASKS_EXTENSION;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::state::AppState;
use crate::tools::{Arguments, Mode, Tool, ToolError, ToolResult};
use serde_json::{Map, Value};

/// Built once at start; shared by every call.
pub(crate) struct Dispatch {
    state: AppState,
    extension: Extension,
    /// How each listed tool runs as a task (grantry's own never do; their rounds may).
    task_support: HashMap<String, TaskSupport>,
}

impl Dispatch {
    /// With the tools `registry` lists, for how each runs as a task.
    pub(crate) fn new(state: AppState, extension: Extension, registry: &Registry) -> Self {
        let task_support = registry
            .descriptions()
            .iter()
            .map(|tool| (tool.name.clone(), tool.task_support()))
            .collect();
        Self {
            state,
            extension,
            task_support,
        }
    }

    /// For a client that takes tasks, in this era, a call of an extension's tool listed with
    /// task support: the work to run as a task, if the extension runs it so.
    pub(crate) fn background(&self, call: &ToolCall) -> Option<Job> {
        let (Called::Added(name, arguments), Era::Modern(_)) = (&call.tool, &call.era) else {
            return None;
        };
        if !call.capabilities.tasks || self.task_support_of(name) == TaskSupport::Forbidden {
            return None;
        }
        let extension = self.extension.as_ref()?;
        extension.background(&self.extension_call((name, arguments), call))
    }

    /// The state the calls run on (the legacy era's sessions hold it for their waits).
    pub(crate) fn state(&self) -> &AppState {
        &self.state
    }

    fn task_support_of(&self, name: &str) -> TaskSupport {
        self.task_support.get(name).copied().unwrap_or_default()
    }

    /// Runs one call to its answer.
    pub(crate) async fn call(&self, call: ToolCall) -> Result<CallAnswer, RpcError> {
        let arguments = match &call.tool {
            Called::Own(arguments) => arguments,
            Called::Added(name, arguments) => return self.added((name, arguments), &call).await,
        };
        if let Some(refusal) = self.refusal(&call).await? {
            return Ok(refusal.into());
        }
        let answer = self.own(arguments, &call).await?;
        Ok(kept_to_schema(arguments.tool(), answer))
    }

    /// Runs a call of one of grantry's own tools (with these `arguments`), in its era.
    async fn own(&self, arguments: &Arguments, call: &ToolCall) -> Result<CallAnswer, RpcError> {
        let lent = Rounds::lent_by(&self.state);
        let (principal, client) = (&call.principal, call.client.as_ref());
        let (retry, capabilities) = (&call.retry, call.capabilities);
        match (arguments.mode(), &call.era) {
            (Mode::Plain, Era::Modern(_)) => {
                PlainCall::new(lent, (principal, client), arguments)
                    .run(retry, capabilities)
                    .await
            }
            (Mode::Plain, Era::Legacy(session)) => {
                let call = PlainCall::new(lent, (principal, client), arguments);
                match call.run_legacy(capabilities).await? {
                    LegacyAnswer::Done(answer) => Ok(answer),
                    LegacyAnswer::SignIn(elicitation) => {
                        Err(session.sign_in_required(principal, &elicitation))
                    }
                }
            }
            (_, Era::Modern(_)) => {
                let caller = (principal, client);
                rounds::with_rounds(lent, caller, arguments, retry, capabilities).await
            }
            (_, Era::Legacy(session)) => {
                let caller = (principal, client);
                let asked = rounds::legacy_write_access(lent, caller, arguments, capabilities);
                if let Some(elicitation) = asked.await? {
                    return Err(session.sign_in_required(principal, &elicitation));
                }
                // A legacy round asks form questions only: where write access is still to be
                // asked for (an account chosen first), the link goes in a tool error.
                let no_url_rounds = Capabilities {
                    url_elicitation: false,
                    ..capabilities
                };
                let mut round = |retry| -> Boxed<'_, _> {
                    Box::pin(async move {
                        rounds::with_rounds(lent, caller, arguments, &retry, no_url_rounds).await
                    })
                };
                session.rounds(retry.clone(), &mut round).await
            }
        }
    }

    /// The answer to a call through a client the operator blocked (`grantry clients block`):
    /// a tool error saying so, for the model to tell the person. Their connections stay.
    async fn refusal(&self, call: &ToolCall) -> Result<Option<ToolResult>, ToolError> {
        let Some(client) = call.client.as_ref().filter(|c| c.is_verified()) else {
            return Ok(None);
        };
        if !self.state.blocklist.is_blocked(client.name()).await? {
            return Ok(None);
        }
        Audit {
            principal: Some(&call.principal),
            client: Some(client),
            ..Default::default()
        }
        .notice(
            "client.refused",
            "call through a blocked MCP client refused",
        );
        Ok(Some(ToolResult::error(format!(
            "The operator of this connector has blocked the MCP client '{}' from using \
             connected accounts. Nothing was done, and your connections are unchanged: use \
             them through another client, or ask the operator to unblock this one.",
            client.name()
        ))))
    }

    /// A call of a tool the extension added: refused before it runs when the tool runs only
    /// as a task and the client takes none.
    async fn added(
        &self,
        (name, arguments): (&str, &Map<String, Value>),
        call: &ToolCall,
    ) -> Result<CallAnswer, RpcError> {
        let Some(extension) = &self.extension else {
            return Err(ToolError::UnknownTool(name.to_owned()).into());
        };
        if self.task_support_of(name) == TaskSupport::Required && !call.capabilities.tasks {
            let tool = format!("The tool {name}");
            return Err(RpcError::extension_required(tool, TASKS_EXTENSION));
        }
        extension
            .call(self.extension_call((name, arguments), call))
            .await
    }

    fn extension_call<'a>(
        &'a self,
        (tool, arguments): (&'a str, &'a Map<String, Value>),
        call: &'a ToolCall,
    ) -> ExtensionCall<'a> {
        ExtensionCall {
            tool,
            arguments,
            request_state: call.retry.request_state.as_deref(),
            input_responses: call.retry.responses.as_ref(),
            capabilities: call.capabilities,
            state: &self.state,
            era: &call.era,
        }
    }
}

/// A tool with an output schema answers valid structured content or a tool error: the SDKs
/// refuse a plain text answer of such a tool as a broken server. Every path is built so
/// (`tests/interop/test_output_schemas.py` walks them); one that is not, a bug, becomes a
/// tool error here rather than an exception in the client, and says so in the log.
fn kept_to_schema(tool: Tool, answer: CallAnswer) -> CallAnswer {
    let CallAnswer::Complete(result) = &answer else {
        return answer;
    };
    if result.is_error || result.structured_content.is_some() || !tool.has_output_schema() {
        return answer;
    }
    tracing::error!(
        tool = tool.name(),
        "a tool with an output schema answered without structured content; sent as a tool error"
    );
    CallAnswer::Complete(CallResult {
        is_error: true,
        ..result.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_with_an_output_schema_never_answers_plain_text_as_a_success() {
        let text = |is_error| CallAnswer::Complete(CallResult::text("words", is_error));
        let kept = kept_to_schema(Tool::ListInvoices, text(false));
        let CallAnswer::Complete(result) = &kept else {
            panic!("complete");
        };
        assert!(result.is_error, "made a tool error");
        assert_eq!(kept_to_schema(Tool::ListInvoices, text(true)), text(true));
        assert_eq!(
            kept_to_schema(Tool::CreateInvoice, text(false)),
            text(false),
            "no output schema: text is its answer"
        );
        let structured = CallAnswer::Complete(CallResult {
            structured_content: Some(serde_json::json!({"invoices": []})),
            ..CallResult::text("none", false)
        });
        assert_eq!(
            kept_to_schema(Tool::ListInvoices, structured.clone()),
            structured
        );
    }
}
