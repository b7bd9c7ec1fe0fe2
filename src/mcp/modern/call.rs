//! A 2026-07-28 `tools/call` read into the typed call [`crate::mcp_calls::dispatch`] runs: its
//! params of the types the schema gives, the tool the registry lists under its name, the
//! caller, and the notifier its notifications go through.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::identity::{McpClient, Presence, Principal, VerifiedClient};
use crate::mcp::modern::envelope::Params;
use crate::mcp::modern::{Asked, Call};
use crate::mcp_calls::call::{Era, ToolCall};
use crate::mcp_calls::registry::{Entry, Listed};
use crate::mcp_calls::rounds::Retry;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::{ReplyTo, RpcError};
use crate::mcp_wire::malformed;
use crate::mcp_wire::notify::Notifier;

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
        let Some(principal) = asked.parts.extensions.get::<Principal>().cloned() else {
            let error =
                RpcError::internal("request reached the tools without an authenticated principal");
            return Err((to, error));
        };
        let presence = asked
            .parts
            .extensions
            .get::<Presence>()
            .copied()
            .unwrap_or_default();
        let verified = asked.parts.extensions.get::<VerifiedClient>();
        let client = McpClient::through(verified, asked.meta.client.clone());
        let (notifier, notifications) = match entry.listed {
            Listed::Own(_) => (Notifier::silent(), None),
            Listed::Added(_) => {
                let meta = &asked.meta;
                let (notifier, notifications) =
                    Notifier::open(meta.progress_token.clone(), meta.log_level);
                (notifier, Some(notifications))
            }
        };
        let call = ToolCall {
            principal,
            client,
            tool: entry.listed.clone(),
            arguments: arguments.unwrap_or_default(),
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
