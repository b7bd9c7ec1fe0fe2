//! The rounds of a tool call (MRTR): what grantry asks the client between a call and its
//! result, and the sealed state each round hands to the next.
//!
//! - [`plain_call`]: a plain tool through its URL-mode sign-in ([`sign_in`]: the link, the
//!   held retry) and, where several accounts are connected, the choice of one.
//! - [`account_choice`]: "which account?", one form-mode round.
//! - [`card`]: for a host that renders MCP Apps instead, the connect card and the words that
//!   send the model to it.
//! - [`form`] (a [`FormTool`](crate::tools::FormTool): the fields its validator rejects) and
//!   [`confirm`] (a [`ConfirmTool`](crate::tools::ConfirmTool): an explicit yes first).
//! - [`more_access`]: before a tool that writes, write access asked for on a connection that
//!   may only read (incremental consent), through a sign-in round.
//! - [`request_state`] (a sign-in round's state) and [`round_state`] (the other rounds'
//!   binding to their caller and arguments).

pub(crate) mod account_choice;
pub(crate) mod card;
mod confirm;
mod form;
mod more_access;
pub(crate) mod plain_call;
pub mod request_state;
mod round_state;
mod services;
pub(crate) mod sign_in;

pub(crate) use services::{RoundCall, Rounds};

use serde_json::{Map, Value};

use crate::identity::{McpClient, Principal};
use crate::mcp_calls::results::CallAnswer;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::tools::{Arguments, Mode};
use account_choice::Before;
use more_access::Gate;

/// One round of a call of a tool with form or confirmation rounds: which account first
/// where that is open, then the tool's own rounds at it.
pub(crate) async fn with_rounds(
    rounds: Rounds<'_>,
    (principal, client): (&Principal, Option<&McpClient>),
    arguments: &Arguments,
    retry: &Retry,
    capabilities: Capabilities,
) -> Result<CallAnswer, RpcError> {
    let tool = arguments.tool();
    let asked = RoundCall::new(rounds, (principal, client), arguments);
    // A retry of the round asking for write access starts over once it is granted, at the
    // account it was asked at.
    let (retry, pinned, _turn) = match more_access::after_round(&asked, tool, retry).await? {
        Some(Gate::Answer(answer)) => return Ok(answer),
        Some(Gate::Proceed { account, turn }) => (&Retry::default(), account, turn),
        None => (retry, None, None),
    };
    let (chosen, fresh) = match pinned {
        Some(account) => (Some(account), true),
        None => match account_choice::before_rounds(&asked, retry, capabilities).await? {
            Before::Answer(answer) => return Ok(answer),
            Before::Proceed { chosen, fresh } => (chosen, fresh),
        },
    };
    // A retry that answered the choice starts the tool's own rounds from their first.
    let retry = if fresh { &Retry::default() } else { retry };
    let call = asked.at(chosen.as_ref());
    if retry.request_state.is_none()
        && let Gate::Answer(answer) =
            more_access::before_first_round(&call, tool, capabilities).await?
    {
        return Ok(answer);
    }
    match arguments.mode() {
        Mode::Form(form) => form::run(&call, tool, form, retry, capabilities).await,
        Mode::Confirm(confirm) => confirm::run(&call, tool, confirm, retry, capabilities).await,
        Mode::Plain => Err(crate::tools::ToolError::UnknownTool(tool.name().to_owned()).into()),
    }
}

/// In a legacy-era session, before the tool's rounds: the URL elicitation asking for write
/// access, when the tool writes and its connection may only read.
pub(crate) async fn legacy_write_access(
    rounds: Rounds<'_>,
    (principal, client): (&Principal, Option<&McpClient>),
    arguments: &Arguments,
    capabilities: Capabilities,
) -> Result<Option<sign_in::UrlElicitation>, RpcError> {
    let call = RoundCall::new(rounds, (principal, client), arguments);
    more_access::legacy_first(&call, arguments.tool(), capabilities).await
}

/// What a retry brings back: the round's `requestState` and the client's `inputResponses`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Retry {
    pub(crate) request_state: Option<String>,
    pub(crate) responses: Option<Map<String, Value>>,
    /// Whether a retry whose sign-in is still pending is held until it ends.
    pub(crate) patience: Patience,
}

/// How long a retry waits for a pending sign-in.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patience {
    /// Up to `--retry-hold`, the client's connection kept alive meanwhile.
    #[default]
    Hold,
    /// Not at all: how the sign-in stands now (a task's step, which its client polls).
    Look,
}

impl Retry {
    /// The client's answer under `key`, as JSON (`Null` when there is none).
    pub(crate) fn response(&self, key: &str) -> &Value {
        self.responses
            .as_ref()
            .and_then(|responses| responses.get(key))
            .unwrap_or(&Value::Null)
    }
}
