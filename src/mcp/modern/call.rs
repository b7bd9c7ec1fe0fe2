//! A 2026-07-28 `tools/call` read into the typed call [`crate::mcp_calls::dispatch`] runs: its
//! params of the types the schema gives, the tool the registry lists under its name with its
//! arguments read into the tool's type, the caller, and the notifier its notifications go
//! through.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::identity::{McpClient, Presence, Principal, VerifiedClient};
use crate::mcp::modern::envelope::Params;
use crate::mcp::modern::{Asked, Call};
use crate::mcp_calls::call::{Called, Era, ToolCall};
use crate::mcp_calls::registry::{Entry, Listed};
use crate::mcp_calls::rounds::Retry;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::{ReplyTo, RpcError};
use crate::mcp_wire::malformed;
use crate::mcp_wire::notify::{Notifications, Notifier};

/// A `tools/call`'s params, read.
pub(super) struct CallParams<'r, 'p> {
    pub(crate) entry: Option<&'r Entry>,
    pub(crate) name: Option<Cow<'p, str>>,
    pub(crate) arguments: Result<Option<Map<String, Value>>, ()>,
    pub(crate) params: &'r Params<'p>,
    pub(crate) capabilities: Capabilities,
}

impl CallParams<'_, '_> {
    pub(super) fn read(self, asked: &Asked<'_>, to: ReplyTo) -> Result<Call, (ReplyTo, RpcError)> {
        let types = || {
            let error = malformed::invalid_params("tools/call", false)
                .unwrap_or_else(|| RpcError::invalid_params("Invalid params"));
            (to.clone(), error)
        };
        let (Some(name), Ok(arguments)) = (self.name, self.arguments) else {
            return Err(types());
        };
        let request_state =
            Params::read::<String>(self.params.request_state).map_err(|()| types())?;
        let responses = Params::read::<Map<String, Value>>(self.params.input_responses)
            .map_err(|()| types())?;
        let Some(entry) = self.entry else {
            return Err((
                to,
                RpcError::invalid_params(format!("Unknown tool: {name}")),
            ));
        };
        let (principal, client, presence) = caller(asked).map_err(|e| (to.clone(), e))?;
        let (notifier, notifications) = notifier(&entry.listed, asked);
        let tool = match Called::read(&entry.listed, arguments.unwrap_or_default()) {
            Ok(tool) => tool,
            Err(invalid) => return Err((to, invalid.into())),
        };
        let call = ToolCall {
            principal,
            client,
            tool,
            retry: Retry {
                request_state,
                responses,
                ..Retry::default()
            },
            capabilities: self.capabilities.for_presence(presence),
            era: Era::Modern(notifier),
        };
        Ok(Call {
            call,
            reply_to: to,
            notifications,
        })
    }
}

/// Who called (authentication put them on the request), through which client, and whether
/// a person is behind the call.
fn caller(asked: &Asked<'_>) -> Result<(Principal, Option<McpClient>, Presence), RpcError> {
    let extensions = &asked.parts.extensions;
    let Some(principal) = extensions.get::<Principal>().cloned() else {
        return Err(RpcError::internal(
            "request reached the tools without an authenticated principal",
        ));
    };
    let presence = extensions.get::<Presence>().copied().unwrap_or_default();
    let verified = extensions.get::<VerifiedClient>();
    let client = McpClient::through(verified, asked.meta.client.clone());
    Ok((principal, client, presence))
}

/// Where a call's notifications go: grantry's own tools send none; an extension's may.
fn notifier(listed: &Listed, asked: &Asked<'_>) -> (Notifier, Option<Notifications>) {
    match listed {
        Listed::Own(_) => (Notifier::silent(), None),
        Listed::Added(_) => {
            let meta = &asked.meta;
            let (notifier, notifications) =
                Notifier::open(meta.progress_token.clone(), meta.log_level);
            (notifier, Some(notifications))
        }
    }
}
