//! The tool registry's one extension point: tools a build adds beside grantry's own. The MCP
//! conformance suite's fixtures (`tests/conformance/fixtures`, the `grantry-conformance`
//! binary) are the one user; the product binary has none.
//!
//! An extension's tools are listed before grantry's own and called in either era with the
//! same [`ExtensionCall`]; they never reach grantry's sign-in rounds. The call lends what
//! grantry would use itself: its sealer (so a `requestState` an extension seals is bound,
//! timed and refused exactly as grantry's own are), the client's declared capabilities,
//! the request's notifications (progress, log messages), and in the legacy era the session
//! to ask mid-call through.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::mcp_calls::call::Era;
pub use crate::mcp_calls::registry::{Execution, TaskSupport, ToolDescription};
pub use crate::mcp_calls::results::{
    CallAnswer, CallResult, Content, Elicitation, EmbeddedText, InputRequest, InputRequired,
};
pub use crate::mcp_wire::capabilities::Capabilities;
pub use crate::mcp_wire::jsonrpc::RpcError;
pub use crate::mcp_wire::notify::LogLevel;
use crate::seal::Sealer;
use crate::state::AppState;

/// Tools added beside grantry's own.
#[async_trait::async_trait]
pub trait ToolExtension: Send + Sync + 'static {
    /// The tools, in the order `tools/list` shows them (before grantry's own).
    fn tools(&self) -> Vec<ToolDescription>;

    /// A call of one of [`tools`](Self::tools).
    async fn call(&self, call: ExtensionCall<'_>) -> Result<CallAnswer, RpcError>;

    /// For a client that takes tasks, a call of a tool listed with task support: the work to
    /// run as a task, in the background (its client polls for the answer); `None` answers
    /// through [`call`](Self::call) as usual (a round asked before the work, say). A job
    /// that answers with a round puts its task in `input_required`; the task's next step is
    /// then a [`call`](Self::call) with the answers.
    fn background(&self, call: &ExtensionCall<'_>) -> Option<Job> {
        let _ = call;
        None
    }
}

/// An extension's work run as a task: owned, so it outlives the request that started it.
pub type Job = futures::future::BoxFuture<'static, Result<CallAnswer, RpcError>>;

/// The extension a build was started with, if any.
pub(crate) type Extension = Option<Arc<dyn ToolExtension>>;

/// One call of an extension's tool.
pub struct ExtensionCall<'a> {
    /// The tool's name, as listed.
    pub tool: &'a str,
    pub arguments: &'a Map<String, Value>,
    /// The `requestState` a retry brought back.
    pub request_state: Option<&'a str>,
    /// The retry's `inputResponses`.
    pub input_responses: Option<&'a Map<String, Value>>,
    /// What the client declared (per request, or at `initialize`).
    pub capabilities: Capabilities,
    pub(super) state: &'a AppState,
    pub(super) era: &'a Era,
}

impl ExtensionCall<'_> {
    /// grantry's sealer, bound to its MCP URL.
    pub fn sealer(&self) -> &Sealer {
        &self.state.sealer
    }

    /// How long a question asked mid-call (legacy era) waits for its answer.
    pub fn elicitation_timeout(&self) -> Duration {
        self.state.config.elicitation_timeout
    }

    /// Reports progress to the client, when the request gave a progress token.
    pub async fn progress(&self, progress: f64, total: Option<f64>) {
        match self.era {
            Era::Modern(notifier) => notifier.progress(progress, total),
            Era::Legacy(session) => session.progress(progress, total).await,
        }
    }

    /// Sends a log message, when the request asked for `level` or a lower one.
    pub async fn log(&self, level: LogLevel, data: Value) {
        match self.era {
            Era::Modern(notifier) => notifier.log(level, data),
            Era::Legacy(session) => session.log(level, data).await,
        }
    }

    /// The era the call came in (the legacy era reads its session from it:
    /// `crate::mcp_legacy::session_context`).
    pub(crate) fn era(&self) -> &Era {
        self.era
    }
}
