//! Form and confirmation rounds in a legacy session: the questions the modern era answers
//! with `input_required` are asked mid-call with `elicitation/create`, one at a time per
//! session across the replicas.

use std::future::Future;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitResult};
use rmcp::service::{RequestContext, ServiceError};
use serde_json::Map;

use crate::leases::LeaseBackend;
use crate::mcp_calls::results::{CallAnswer, CallResult, Elicitation, InputRequest};
use crate::mcp_calls::rounds::Retry;
use crate::mcp_legacy::session_id;
use crate::mcp_wire::jsonrpc::RpcError;

/// A call asks at most this many questions in a row (grantry's own rounds need two).
const MAX_ROUNDS: usize = 8;

/// What asking takes: the leases that keep a session's questions one at a time across the
/// replicas, and how long a question waits for its answer.
pub(crate) struct Asking<'a> {
    pub(crate) leases: &'a dyn LeaseBackend,
    pub(crate) timeout: Duration,
}

/// Runs a call whose modern form answers `input_required` with form-mode questions: each
/// question is asked with `elicitation/create` on the call's stream, and the answers go into
/// the next round as `inputResponses` with the round's `requestState`, until the call
/// completes. A question left unanswered (or not askable) changes nothing.
///
/// rmcp numbers a session's questions per replica, so two replicas asking in one session at
/// once could each have a question with the same id, and an answer routed to the wrong one
/// would answer the wrong question. A lease in the store makes the session's questions one at
/// a time across the replicas; a misrouted answer then meets no question and is dropped.
pub(crate) async fn drive_rounds<F, Fut>(
    asking: Asking<'_>,
    ctx: &RequestContext<RoleServer>,
    mut retry: Retry,
    mut round: F,
) -> Result<CallAnswer, RpcError>
where
    F: FnMut(Retry) -> Fut,
    Fut: Future<Output = Result<CallAnswer, RpcError>>,
{
    // In a legacy session every request names its session.
    let Some(session) = request_session(ctx) else {
        return Err(RpcError::internal("a legacy call outside a session"));
    };
    let lease = format!("legacy-question:{session}");
    for _ in 0..MAX_ROUNDS {
        let required = match round(retry).await? {
            CallAnswer::InputRequired(required) => required,
            done @ CallAnswer::Complete(_) => return Ok(done),
        };
        let mut answers = Map::new();
        for (key, question) in required.input_requests {
            let InputRequest::Elicit(form @ Elicitation::Form { .. }) = question else {
                return Err(RpcError::internal(
                    "a legacy round can only ask form questions",
                ));
            };
            let ask: ElicitRequestParams =
                serde_json::from_value(serde_json::json!(form)).map_err(internal)?;
            match ask_one(&asking, ctx, &lease, ask).await {
                Ok(answer) => {
                    answers.insert(key, serde_json::to_value(answer).map_err(internal)?);
                }
                Err(why) => return Ok(unasked(&why)),
            }
        }
        retry = Retry {
            request_state: required.request_state,
            responses: Some(answers),
            ..Retry::default()
        };
    }
    Err(RpcError::internal("too many rounds"))
}

/// Asks one question while holding the session's question lease: the answer, or why there
/// is none.
async fn ask_one(
    asking: &Asking<'_>,
    ctx: &RequestContext<RoleServer>,
    lease: &str,
    ask: ElicitRequestParams,
) -> Result<ElicitResult, String> {
    let timeout = asking.timeout;
    let holder = crate::seal::random_id();
    let ttl_ms = (timeout + LEASE_MARGIN).as_millis() as i64;
    match asking.leases.try_acquire(lease, &holder, ttl_ms).await {
        Ok(true) => {}
        Ok(false) => return Err(ANOTHER_QUESTION.to_owned()),
        Err(e) => {
            crate::metrics::store_error("session");
            tracing::error!(error = %e, "store unavailable before asking a question");
            return Err(STORE_DOWN.to_owned());
        }
    }
    let answer = ctx
        .peer
        .create_elicitation_with_timeout(ask, Some(timeout))
        .await;
    if let Err(e) = asking.leases.release(lease, &holder).await {
        tracing::warn!(error = %e, "a question's lease was not released; it expires");
    }
    answer.map_err(|e| match e {
        ServiceError::Timeout { .. } => {
            format!("No answer came within {} seconds", timeout.as_secs())
        }
        e => {
            tracing::info!(error = %e, "elicitation/create failed; nothing changed");
            "The question could not be asked".to_owned()
        }
    })
}

/// A question's lease outlives its timeout by this much.
const LEASE_MARGIN: Duration = Duration::from_secs(30);
const ANOTHER_QUESTION: &str =
    "Another question is waiting for its answer in this session; answer it first, then ask again";
const STORE_DOWN: &str = "grantry's store is unavailable, so the question was not asked";

/// The call's end when its question got no answer: nothing was changed.
fn unasked(why: &str) -> CallAnswer {
    CallAnswer::Complete(CallResult::text(
        format!("{why}. Nothing was changed."),
        true,
    ))
}

/// The `Mcp-Session-Id` of the request behind `ctx`.
fn request_session(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|parts| session_id(parts))
        .map(str::to_owned)
}

fn internal(e: impl std::fmt::Display) -> RpcError {
    RpcError::internal(e.to_string())
}
