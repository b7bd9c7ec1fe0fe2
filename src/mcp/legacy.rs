//! The legacy era (2025-11-25) on the same `/mcp` endpoint, for clients that start with
//! `initialize` (the TypeScript SDK's and MCP Inspector's defaults).
//!
//! rmcp runs the sessions (`Mcp-Session-Id`, the handshake, the streams); grantry adds:
//!
//! - **Sessions in the store**, bound to their opener ([`Sessions`]). The edge records a new
//!   session with the caller's tag once `initialize` has answered, and refuses a request
//!   naming a session that is not the caller's as if it did not exist (404). A replica that
//!   has not seen a session restores it from the record (rmcp replays the handshake).
//! - **URL elicitation the legacy way**: a plain tool that needs a connection answers
//!   `-32042` with the connect link ([`url_elicitation_required`]); when the grant lands,
//!   `notifications/elicitation/complete` goes to the session ([`notify_when_connected`]).
//! - **Form rounds as `elicitation/create`** ([`drive_rounds`]): the same rounds the modern
//!   era answers with `input_required` are asked on the call's stream and answered there.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomNotification, ElicitRequestParams, ErrorCode,
    ErrorData, InitializeRequestParams, ServerNotification,
};
use rmcp::service::{Peer, RequestContext, ServiceError};
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;

use super::handler::{complete, from_json};
use super::sign_in::UrlElicitation;
use crate::grants::GrantKey;
use crate::identity::Principal;
use crate::sessions::{SessionBackend, SessionRecord};
use crate::state::AppState;
use crate::tools::ToolResult;

/// The session header (rmcp's name for it).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// An unused session is forgotten after this long; each request pushes it on.
const SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// How long a form question asked with `elicitation/create` waits for its answer.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// A call asks at most this many questions in a row (grantry's own rounds need two).
const MAX_ROUNDS: usize = 8;
/// The code of the legacy URLElicitationRequiredError.
const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

/// Whether this request belongs to a legacy-era session (it opened with `initialize`).
pub fn is_legacy(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.meta.protocol_version().is_none()
        && ctx
            .peer
            .peer_info()
            .is_some_and(|info| info.protocol_version.has_initialize())
}

/// The sessions in the store, as the edge and rmcp use them.
#[derive(Clone)]
pub struct Sessions {
    backend: Arc<dyn SessionBackend>,
}

/// Why the edge stops a request before rmcp.
pub enum Refusal {
    /// No such session for this caller: the spec's answer for an unknown session.
    NotFound,
    /// The store could not be read: retry later.
    Unavailable,
}

impl Refusal {
    pub fn into_response(self) -> Response {
        let (status, text) = match self {
            Self::NotFound => (StatusCode::NOT_FOUND, "Not Found: Session not found"),
            Self::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "grantry's store is unavailable; retry in a moment",
            ),
        };
        let mut response = Response::new(Body::from(text));
        *response.status_mut() = status;
        response.headers_mut().insert(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        response
    }
}

impl Sessions {
    pub fn new(backend: Arc<dyn SessionBackend>) -> Self {
        Self { backend }
    }

    /// rmcp's view: it restores sessions from the records the edge writes.
    pub fn for_rmcp(&self) -> Arc<dyn SessionStore> {
        Arc::new(RmcpSessions(self.backend.clone()))
    }

    /// A request naming a session must come from the principal who opened it; any other
    /// caller is told the session does not exist. Using it keeps it alive.
    pub async fn check_owner(&self, parts: &Parts) -> Result<(), Refusal> {
        let Some(id) = session_id(parts) else {
            return Ok(());
        };
        let Some(principal) = parts.extensions.get::<Principal>() else {
            return Err(Refusal::NotFound);
        };
        match self.backend.touch(id, ttl_ms()).await {
            Ok(Some(record)) if record.owner == principal.tag() => Ok(()),
            Ok(_) => {
                tracing::info!(
                    principal = %principal.tag(),
                    "request for a session that is not the caller's, or is gone"
                );
                Err(Refusal::NotFound)
            }
            Err(e) => {
                crate::metrics::store_error("session");
                tracing::error!(error = %e, "store unavailable while checking a session");
                Err(Refusal::Unavailable)
            }
        }
    }

    /// After rmcp answered an `initialize` with the new session `id`: records it with its
    /// opener. `body` is the request (its `params` are what a restore replays).
    pub async fn record(&self, opener: &Principal, body: &[u8], id: &str) -> Result<(), Refusal> {
        let params = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|mut message| message.get_mut("params").map(Value::take))
            .filter(|params| {
                serde_json::from_value::<InitializeRequestParams>(params.clone()).is_ok()
            });
        let Some(params) = params else {
            // rmcp opened a session for something it read as `initialize`: keep it local.
            tracing::warn!("a new session's initialize params could not be read; not shared");
            return Ok(());
        };
        let record = SessionRecord {
            owner: opener.tag(),
            initialize: params.to_string(),
        };
        self.backend.put(id, &record, ttl_ms()).await.map_err(|e| {
            crate::metrics::store_error("session");
            tracing::error!(error = %e, "store unavailable while recording a session");
            Refusal::Unavailable
        })?;
        crate::metrics::session_opened();
        Ok(())
    }
}

/// The session a response opened (rmcp names it in the header of its `initialize` answer).
pub fn opened_session(response: &Response) -> Option<String> {
    response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub fn session_id(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
}

fn ttl_ms() -> i64 {
    SESSION_TTL.as_millis() as i64
}

/// rmcp's session store over grantry's: loads for a restore and deletes on `DELETE`. It
/// writes nothing: rmcp does not know who opened a session, so the edge writes the record.
struct RmcpSessions(Arc<dyn SessionBackend>);

#[async_trait::async_trait]
impl SessionStore for RmcpSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(record) = self.0.touch(session_id, ttl_ms()).await? else {
            return Ok(None);
        };
        let params: InitializeRequestParams = serde_json::from_str(&record.initialize)?;
        Ok(Some(SessionState::new(params)))
    }

    async fn store(
        &self,
        _session_id: &str,
        _state: &SessionState,
    ) -> Result<(), SessionStoreError> {
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.0.delete(session_id).await?)
    }
}

/// The legacy answer for a missing connection: `-32042` with the connect link.
pub fn url_elicitation_required(elicitation: &UrlElicitation) -> ErrorData {
    ErrorData::new(
        URL_ELICITATION_REQUIRED,
        "This request needs a connected account: open the link to connect it, then retry",
        Some(json!({"elicitations": [{
            "mode": "url",
            "elicitationId": elicitation.elicitation_id,
            "url": elicitation.url,
            "message": elicitation.message,
        }]})),
    )
}

/// Sends `notifications/elicitation/complete` to the session once `principal` has connected
/// `elicitation.provider`, waiting at most `until` (the link's lifetime). Waiters are
/// bounded by `permits`: past them, the client simply learns by retrying.
pub fn notify_when_connected(
    state: AppState,
    permits: Arc<Semaphore>,
    principal: Principal,
    elicitation: &UrlElicitation,
    peer: Peer<RoleServer>,
    until: Duration,
) {
    let Ok(permit) = permits.try_acquire_owned() else {
        return;
    };
    let key = GrantKey {
        principal,
        provider: elicitation.provider.clone(),
    };
    let elicitation_id = elicitation.elicitation_id.clone();
    tokio::spawn(async move {
        let _permit = permit;
        let deadline = tokio::time::Instant::now() + until;
        loop {
            // Subscribe before reading, so a grant landing in between still wakes us.
            let mut waiter = state.grants.events().subscribe();
            if let Ok(Some(_)) = state.grants.get(&key).await {
                let notice = CustomNotification::new(
                    "notifications/elicitation/complete",
                    Some(json!({"elicitationId": elicitation_id})),
                );
                if let Err(e) = peer
                    .send_notification(ServerNotification::CustomNotification(notice))
                    .await
                {
                    tracing::debug!(error = %e, "elicitation/complete not delivered");
                }
                return;
            }
            if peer.is_transport_closed() {
                return;
            }
            tokio::select! {
                _ = waiter.changed(&key) => {}
                _ = tokio::time::sleep(super::sign_in::HOLD_POLL) => {}
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    });
}

/// Runs a call whose modern form answers `input_required` with form-mode questions: each
/// question is asked with `elicitation/create` on the call's stream, and the answers go into
/// the next round as `inputResponses` with the round's `requestState`, until the call
/// completes. A question left unanswered changes nothing.
pub async fn drive_rounds<F, Fut>(
    mut params: CallToolRequestParams,
    peer: &Peer<RoleServer>,
    mut round: F,
) -> Result<CallToolResponse, ErrorData>
where
    F: FnMut(CallToolRequestParams) -> Fut,
    Fut: Future<Output = Result<CallToolResponse, ErrorData>>,
{
    for _ in 0..MAX_ROUNDS {
        let required = match round(params.clone()).await? {
            CallToolResponse::InputRequired(required) => required,
            done => return Ok(done),
        };
        let required = serde_json::to_value(&required).map_err(internal)?;
        let mut answers = Map::new();
        let questions = required["inputRequests"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (key, question) in questions {
            if question["method"] != "elicitation/create" || question["params"]["mode"] == "url" {
                return Err(internal("a legacy round can only ask form questions"));
            }
            let ask: ElicitRequestParams =
                serde_json::from_value(question["params"].clone()).map_err(internal)?;
            match peer
                .create_elicitation_with_timeout(ask, Some(ANSWER_TIMEOUT))
                .await
            {
                Ok(answer) => {
                    answers.insert(key, serde_json::to_value(answer).map_err(internal)?);
                }
                Err(ServiceError::Timeout { .. }) => {
                    return Ok(complete(ToolResult::error(format!(
                        "No answer came within {} minutes, so nothing was changed.",
                        ANSWER_TIMEOUT.as_secs() / 60
                    ))));
                }
                Err(e) => {
                    tracing::info!(error = %e, "elicitation/create failed; nothing changed");
                    return Ok(complete(ToolResult::error(
                        "The question could not be asked, so nothing was changed.",
                    )));
                }
            }
        }
        params.request_state = required["requestState"].as_str().map(str::to_owned);
        params.input_responses = Some(from_json(Value::Object(answers)));
    }
    Err(internal("too many rounds"))
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, e.to_string(), None)
}
