//! What a legacy-era (2025-11-25) call has that a modern one has not: rmcp's session, to ask
//! its client mid-call, to tell it when a sign-in landed, and to send notifications on.
//! [`crate::mcp::dispatch`] reaches the era through this one type.
#![expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577 but still in 2025-11-25 and 2026-07-28"
)]

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam};
use rmcp::service::RequestContext;
use serde_json::Value;

use super::notices::{self, CompletionNotices};
use super::questions;
use crate::identity::Principal;
use crate::mcp::jsonrpc::RpcError;
use crate::mcp::notify::LogLevel;
use crate::mcp::results::CallAnswer;
use crate::mcp::rounds::Retry;
use crate::mcp::rounds::sign_in::UrlElicitation;
use crate::state::AppState;

/// A legacy session's request as rmcp hands it over: how a call asks its client mid-call (an
/// extension's tools use it directly, [`crate::mcp::extension::ExtensionCall::legacy_session`]).
pub(crate) type SessionContext = RequestContext<RoleServer>;

/// One call in a legacy session.
pub(crate) struct LegacyCall {
    ctx: RequestContext<RoleServer>,
    notices: Arc<CompletionNotices>,
}

impl LegacyCall {
    pub(crate) fn new(ctx: RequestContext<RoleServer>, notices: Arc<CompletionNotices>) -> Self {
        Self { ctx, notices }
    }

    /// rmcp's view of the call.
    pub(crate) fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// The `-32042` for a call that needs a sign-in; the session hears
    /// `notifications/elicitation/complete` once it lands.
    pub(crate) fn sign_in_required(
        &self,
        state: &AppState,
        principal: &Principal,
        elicitation: &UrlElicitation,
    ) -> RpcError {
        notices::notify_when_connected(
            state.clone(),
            &self.notices,
            principal.clone(),
            elicitation,
            self.ctx.peer.clone(),
        );
        notices::url_elicitation_required(elicitation)
    }

    /// Runs a call's rounds, asking each question on the session ([`questions::drive_rounds`]).
    pub(crate) async fn rounds<F, Fut>(
        &self,
        state: &AppState,
        retry: Retry,
        round: F,
    ) -> Result<CallAnswer, RpcError>
    where
        F: FnMut(Retry) -> Fut,
        Fut: Future<Output = Result<CallAnswer, RpcError>>,
    {
        let asking = questions::Asking {
            leases: &*state.leases,
            timeout: state.config.elicitation_timeout,
        };
        questions::drive_rounds(asking, &self.ctx, retry, round).await
    }

    /// `notifications/progress`, when the request gave a progress token.
    pub(crate) async fn progress(&self, progress: f64, total: Option<f64>) {
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
    }

    /// The level the request's `_meta` asked log messages at, if any.
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
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

    /// `notifications/message`, when the request asked for `level` or a lower one.
    pub(crate) async fn log(&self, level: LogLevel, data: Value) {
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
    }
}
