//! Where a tool call goes, in either era: the one function both the modern edge and the
//! legacy handler hand their [`ToolCall`] to. A plain tool runs through its sign-in rounds,
//! a tool with form or confirmation rounds through those, an extension's tool through the
//! extension; what differs between the eras is only how a round reaches the person
//! (`input_required`, or `-32042` and `elicitation/create` on a legacy session).

use super::capabilities::Capabilities;
use super::extension::{Extension, ExtensionCall};
use super::jsonrpc::RpcError;
use super::registry::Listed;
use super::request::{Era, ToolCall};
use super::results::CallAnswer;
use super::rounds::plain_call::{LegacyAnswer, PlainCall};
use super::rounds::{self};
use crate::state::AppState;
use crate::tools::{Mode, ToolError};

/// Built once at start; shared by every call.
pub(crate) struct Dispatch {
    state: AppState,
    extension: Extension,
}

impl Dispatch {
    pub(crate) fn new(state: AppState, extension: Extension) -> Self {
        Self { state, extension }
    }

    /// Runs one call to its answer.
    pub(crate) async fn call(&self, call: ToolCall) -> Result<CallAnswer, RpcError> {
        let tool = match &call.tool {
            Listed::Own(tool) => *tool,
            Listed::Added(name) => return self.added(name, &call).await,
        };
        let state = &self.state;
        let ToolCall {
            principal,
            arguments,
            retry,
            capabilities,
            era,
            ..
        } = call;
        match (tool.mode(), era) {
            (Mode::Plain, Era::Modern(_)) => {
                PlainCall::new(state, &principal, tool, &arguments)
                    .run(&retry, capabilities)
                    .await
            }
            (Mode::Plain, Era::Legacy(session)) => {
                let call = PlainCall::new(state, &principal, tool, &arguments);
                match call.run_legacy(capabilities).await? {
                    LegacyAnswer::Done(answer) => Ok(answer),
                    LegacyAnswer::SignIn(elicitation) => {
                        Err(session.sign_in_required(state, &principal, &elicitation))
                    }
                }
            }
            (_, Era::Modern(_)) => {
                rounds::with_rounds(state, &principal, tool, &arguments, &retry, capabilities).await
            }
            (_, Era::Legacy(session)) => {
                let asked =
                    rounds::legacy_write_access(state, &principal, tool, &arguments, capabilities);
                if let Some(elicitation) = asked.await? {
                    return Err(session.sign_in_required(state, &principal, &elicitation));
                }
                // A legacy round asks form questions only: where write access is still to be
                // asked for (an account chosen first), the link goes in a tool error.
                let no_url_rounds = Capabilities {
                    url_elicitation: false,
                    ..capabilities
                };
                let round = |retry| {
                    let (principal, arguments) = (&principal, &arguments);
                    async move {
                        rounds::with_rounds(
                            state,
                            principal,
                            tool,
                            arguments,
                            &retry,
                            no_url_rounds,
                        )
                        .await
                    }
                };
                session.rounds(state, retry, round).await
            }
        }
    }

    /// A call of a tool the extension added.
    async fn added(&self, name: &str, call: &ToolCall) -> Result<CallAnswer, RpcError> {
        let Some(extension) = &self.extension else {
            return Err(ToolError::UnknownTool(name.to_owned()).into());
        };
        let call = ExtensionCall {
            tool: name,
            arguments: &call.arguments,
            request_state: call.retry.request_state.as_deref(),
            input_responses: call.retry.responses.as_ref(),
            capabilities: call.capabilities,
            state: &self.state,
            era: &call.era,
        };
        extension.call(call).await
    }
}
