//! A `tools/call` as the edge parsed it: one typed value, whichever era it came in. The modern
//! edge ([`super::modern`]) and the legacy handler ([`super::legacy::McpHandler`]) each build one
//! and hand it to [`super::dispatch`]; nothing below reads the JSON it came from.

use serde_json::{Map, Value};

use super::capabilities::Capabilities;
use super::legacy::session::LegacyCall;
use super::notify::Notifier;
use super::registry::Listed;
use super::rounds::Retry;
use crate::identity::{McpClient, Principal};

/// One tool call.
pub(crate) struct ToolCall {
    /// Who called, as authentication found them.
    pub(crate) principal: Principal,
    /// The client it came through: verified by the token where the issuer names one, else
    /// as the client declared itself.
    pub(crate) client: Option<McpClient>,
    /// The tool, looked up once by its name.
    pub(crate) tool: Listed,
    pub(crate) arguments: Map<String, Value>,
    /// What a retry of a round brings back (empty on a first call).
    pub(crate) retry: Retry,
    /// What the client declared it can do.
    pub(crate) capabilities: Capabilities,
    /// The era it came in, with what that era lends the call.
    pub(crate) era: Era,
}

/// The era of a call.
pub(crate) enum Era {
    /// 2026-07-28: stateless; notifications go on the call's own answer stream.
    Modern(Notifier),
    /// 2025-11-25: a session of rmcp's, which asks mid-call and hears the sign-in land.
    Legacy(LegacyCall),
}
