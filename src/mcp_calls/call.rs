//! A `tools/call` as the edge parsed it: one typed value, whichever era it came in. The
//! endpoint's modern edge and the legacy era's handler each build one and hand it to
//! [`super::dispatch`]; nothing below reads the JSON it came from (an extension's tool
//! excepted: its arguments are the extension's to read).

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::registry::Listed;
use super::results::CallAnswer;
use super::rounds::Retry;
use super::rounds::sign_in::UrlElicitation;
use crate::identity::{McpClient, Principal};
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::mcp_wire::notify::{LogLevel, Notifier};
use crate::tools::{Arguments, ToolError};

/// One tool call.
pub(crate) struct ToolCall {
    /// Who called, as authentication found them.
    pub(crate) principal: Principal,
    /// The client it came through: verified by the token where the issuer names one, else
    /// as the client declared itself.
    pub(crate) client: Option<McpClient>,
    /// The tool, looked up once by its name, with its arguments.
    pub(crate) tool: Called,
    /// What a retry of a round brings back (empty on a first call).
    pub(crate) retry: Retry,
    /// What the client declared it can do.
    pub(crate) capabilities: Capabilities,
    /// The era it came in, with what that era lends the call.
    pub(crate) era: Era,
}

/// The tool a call is of, with its arguments.
pub(crate) enum Called {
    /// One of grantry's own, its arguments read into the tool's type.
    Own(Arguments),
    /// One an extension added, its arguments as they came (the extension reads them).
    Added(Arc<str>, Map<String, Value>),
}

impl Called {
    /// A call of `listed` with `arguments` as the wire has them: for one of grantry's own
    /// tools, read into its type (what does not fit is refused here, at the edge).
    pub(crate) fn read(listed: &Listed, arguments: Map<String, Value>) -> Result<Self, ToolError> {
        Ok(match listed {
            Listed::Own(tool) => Self::Own(Arguments::read(*tool, &arguments)?),
            Listed::Added(name) => Self::Added(name.clone(), arguments),
        })
    }

    /// The tool, as the registry lists it.
    pub(crate) fn listed(&self) -> Listed {
        match self {
            Self::Own(arguments) => Listed::Own(arguments.tool()),
            Self::Added(name, _) => Listed::Added(name.clone()),
        }
    }

    /// The arguments as the wire has them (what a task keeps of its call).
    pub(crate) fn wire_arguments(&self) -> Map<String, Value> {
        match self {
            Self::Own(arguments) => arguments.to_wire(),
            Self::Added(_, arguments) => arguments.clone(),
        }
    }
}

/// The era of a call.
pub(crate) enum Era {
    /// 2026-07-28: stateless; notifications go on the call's own answer stream.
    Modern(Notifier),
    /// 2025-11-25: a session of rmcp's, which asks mid-call and hears the sign-in land.
    Legacy(Box<dyn LegacySession>),
}

/// A future a legacy session's methods return: boxed, as the trait is used as an object.
pub(crate) type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One round of a call, run again with each retry's answers (see [`LegacySession::rounds`]).
pub(crate) type Round<'a> = dyn FnMut(Retry) -> Boxed<'a, Result<CallAnswer, RpcError>> + Send + 'a;

/// What a legacy-era session lends a call: the era (`crate::mcp_legacy`, which stands on
/// this room) implements it on rmcp's session, so the dispatch reaches the era without
/// naming it.
pub(crate) trait LegacySession: Send + Sync {
    /// The `-32042` for a call that needs a sign-in; the session hears
    /// `notifications/elicitation/complete` once it lands.
    fn sign_in_required(&self, principal: &Principal, elicitation: &UrlElicitation) -> RpcError;

    /// Runs a call's rounds, asking each round's questions mid-call on the session.
    fn rounds<'a>(
        &'a self,
        retry: Retry,
        round: &'a mut Round<'a>,
    ) -> Boxed<'a, Result<CallAnswer, RpcError>>;

    /// `notifications/progress`, when the request gave a progress token.
    fn progress(&self, progress: f64, total: Option<f64>) -> Boxed<'_, ()>;

    /// `notifications/message`, when the request asked for `level` or a lower one.
    fn log(&self, level: LogLevel, data: Value) -> Boxed<'_, ()>;

    /// The session as the era knows it (for an extension's tools that ask mid-call).
    fn as_any(&self) -> &dyn Any;
}
