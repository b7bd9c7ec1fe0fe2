//! The tool registry's one extension point: tools a build adds beside grantry's own. The MCP
//! conformance suite's fixtures (`tests/conformance/fixtures`, the `grantry-conformance`
//! binary) are the one user; the product binary has none.
//!
//! An extension's tools are listed before grantry's own and called through rmcp in either
//! era; they never reach grantry's sign-in rounds or its direct path. A [`Host`] lends a call
//! what grantry would use itself: its sealer (so a `requestState` an extension seals is
//! bound, timed and refused exactly as grantry's own are), the client's declared
//! capabilities, the era, and the question timeout.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData, Tool};
use rmcp::service::RequestContext;
use serde_json::Value;

use crate::seal::Sealer;
use crate::state::AppState;

/// Tools added beside grantry's own.
#[async_trait::async_trait]
pub trait ToolExtension: Send + Sync + 'static {
    /// The tools, in the order `tools/list` shows them (before grantry's own).
    fn tools(&self) -> Vec<Tool>;

    /// Whether `name` is one of [`tools`](Self::tools).
    fn handles(&self, name: &str) -> bool;

    /// A call of one of the tools.
    async fn call(
        &self,
        params: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
        host: Host<'_>,
    ) -> Result<CallToolResponse, ErrorData>;
}

/// The extension a build was started with, if any.
pub type Extension = Option<Arc<dyn ToolExtension>>;

/// What grantry lends one call of an extension's tool.
pub struct Host<'a> {
    state: &'a AppState,
}

impl<'a> Host<'a> {
    pub(super) fn new(state: &'a AppState) -> Self {
        Self { state }
    }

    /// grantry's sealer, bound to its MCP URL.
    pub fn sealer(&self) -> &Sealer {
        &self.state.sealer
    }

    /// How long a question asked mid-call (legacy era) waits for its answer.
    pub fn elicitation_timeout(&self) -> Duration {
        self.state.config.elicitation_timeout
    }
}

/// The capabilities the client declared: per request (2026-07-28) or at `initialize`.
pub fn client_capabilities(ctx: &RequestContext<RoleServer>) -> Value {
    super::capabilities::client_capabilities(ctx)
}

/// Whether the call came in a legacy-era (2025-11-25) session.
pub fn is_legacy(ctx: &RequestContext<RoleServer>) -> bool {
    super::legacy::is_legacy(ctx)
}

/// grantry's one answer to a `requestState` that does not hold up.
pub fn invalid_request_state() -> ErrorData {
    super::answers::invalid_request_state()
}

/// An rmcp value from JSON, the envelope's absent (null) fields dropped as rmcp wants them.
///
/// # Panics
///
/// When `value` is not the shape of `T`: values an extension builds itself.
pub fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> T {
    super::answers::from_json(value)
}
