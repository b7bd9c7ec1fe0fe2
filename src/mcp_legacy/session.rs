//! What a legacy-era (2025-11-25) call has that a modern one has not: rmcp's session, to ask
//! its client mid-call, to tell it when a sign-in landed, and to send notifications on.
//! The calls' dispatch reaches the era through this one type, as a
//! [`LegacySession`].
#![expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577 but still in 2025-11-25 and 2026-07-28"
)]

use std::any::Any;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam};
use rmcp::service::RequestContext;
use serde_json::Value;

use crate::identity::Principal;
use crate::mcp_calls::call::{Boxed, LegacySession, Round};
use crate::mcp_calls::results::CallAnswer;
use crate::mcp_calls::rounds::Retry;
use crate::mcp_calls::rounds::sign_in::UrlElicitation;
use crate::mcp_legacy::notices::{self, CompletionNotices};
use crate::mcp_legacy::questions;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::mcp_wire::notify::LogLevel;
use crate::state::AppState;

/// A legacy session's request as rmcp hands it over: how a call asks its client mid-call (an
/// extension's tools use it directly, through [`super::session_context`]).
pub(crate) type SessionContext = RequestContext<RoleServer>;

/// One call in a legacy session.
pub(crate) struct LegacyCall {
    ctx: RequestContext<RoleServer>,
    notices: Arc<CompletionNotices>,
    /// What the era's waits and questions use beyond the call: the sign-ins landing, the
    /// leases, the settings.
    state: AppState,
}

impl LegacyCall {
    pub(crate) fn new(
        ctx: RequestContext<RoleServer>,
        notices: Arc<CompletionNotices>,
        state: AppState,
    ) -> Self {
        Self {
            ctx,
            notices,
            state,
        }
    }

    /// rmcp's view of the call.
    pub(crate) fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// The level the request's `_meta` asked log messages at, if any.
    fn log_level(&self) -> Option<LogLevel> {
        let level = self.ctx.meta.log_level()?;
        Some(match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        })
    }
}

impl LegacySession for LegacyCall {
    fn sign_in_required(&self, principal: &Principal, elicitation: &UrlElicitation) -> RpcError {
        notices::notify_when_connected(
            self.state.clone(),
            &self.notices,
            principal.clone(),
            elicitation,
            self.ctx.peer.clone(),
        );
        notices::url_elicitation_required(elicitation)
    }

    /// Each question asked on the session ([`questions::drive_rounds`]).
    fn rounds<'a>(
        &'a self,
        retry: Retry,
        round: &'a mut Round<'a>,
    ) -> Boxed<'a, Result<CallAnswer, RpcError>> {
        let asking = questions::Asking {
            leases: &*self.state.leases,
            timeout: self.state.config.elicitation_timeout,
        };
        Box::pin(questions::drive_rounds(asking, &self.ctx, retry, round))
    }

    fn progress(&self, progress: f64, total: Option<f64>) -> Boxed<'_, ()> {
        Box::pin(async move {
            let Some(token) = self.ctx.meta.get_progress_token() else {
                return;
            };
            let mut note = ProgressNotificationParam::new(token, progress);
            if let Some(total) = total {
                note = note.with_total(total);
            }
            if let Err(e) = self.ctx.peer.notify_progress(note).await {
                tracing::debug!(error = %e, "progress notification not delivered");
            }
        })
    }

    fn log(&self, level: LogLevel, data: Value) -> Boxed<'_, ()> {
        Box::pin(async move {
            if self.log_level().is_none_or(|asked| level < asked) {
                return;
            }
            let Ok(level) = serde_json::from_value::<LoggingLevel>(serde_json::json!(level)) else {
                return;
            };
            let note = LoggingMessageNotificationParam::new(level, data);
            if let Err(e) = self.ctx.peer.notify_logging_message(note).await {
                tracing::debug!(error = %e, "log notification not delivered");
            }
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
