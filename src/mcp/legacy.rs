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

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
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
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use serde_json::{Map, Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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
/// The most of a client's `initialize` params kept for a restore (its version, capabilities
/// and client info are what a restore replays).
const MAX_STORED_PARAMS: usize = 16 * 1024;
/// A call asks at most this many questions in a row (grantry's own rounds need two).
const MAX_ROUNDS: usize = 8;
/// The code of the legacy URLElicitationRequiredError.
const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

/// Whether this request belongs to a legacy-era session: it carries no per-request version
/// and its session began with `initialize` (whatever version that asked for, the session
/// speaks 2025-11-25).
pub fn is_legacy(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.meta.protocol_version().is_none() && ctx.peer.peer_info().is_some()
}

/// The sessions in the store, as the edge and rmcp use them, and the cap on how many rmcp
/// keeps in memory here (each costs tens of kilobytes while it lives).
#[derive(Clone)]
pub struct Sessions {
    backend: Arc<dyn SessionBackend>,
    memory: Arc<LocalSessionManager>,
    cap: usize,
}

/// Why the edge stops a request before rmcp.
pub enum Refusal {
    /// No such session for this caller: the spec's answer for an unknown session.
    NotFound,
    /// The `initialize` params are larger than a session may keep.
    TooLarge,
    /// As many sessions as `--max-legacy-sessions` live here: retry later.
    Full,
    /// The store could not be read: retry later.
    Unavailable,
}

impl Refusal {
    pub fn into_response(self) -> Response {
        let (status, text) = match self {
            Self::NotFound => (StatusCode::NOT_FOUND, "Not Found: Session not found"),
            Self::TooLarge => (
                StatusCode::BAD_REQUEST,
                "Bad Request: the initialize params are too large to keep a session for",
            ),
            Self::Full => (
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: grantry holds as many legacy-era sessions as it may; \
                 retry in a minute, or use protocol 2026-07-28 (no sessions)",
            ),
            Self::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "grantry's store is unavailable; retry in a moment",
            ),
        };
        let mut response = Response::new(Body::from(text));
        *response.status_mut() = status;
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                HeaderValue::from_static("60"),
            );
        }
        response.headers_mut().insert(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        response
    }
}

impl Sessions {
    pub fn new(
        backend: Arc<dyn SessionBackend>,
        memory: Arc<LocalSessionManager>,
        cap: usize,
    ) -> Self {
        Self {
            backend,
            memory,
            cap,
        }
    }

    /// Whether rmcp may open (or restore) one more session here.
    async fn has_room(&self) -> bool {
        self.memory.sessions.read().await.len() < self.cap
    }

    /// Before rmcp sees a request outside any session: an `initialize` (which would open
    /// one) waits for room. Modern requests, which open none, are not read.
    pub async fn admit(&self, parts: &Parts, body: &[u8]) -> Result<(), Refusal> {
        if session_id(parts).is_some() || is_modern(&parts.headers) || !opens_session(body) {
            return Ok(());
        }
        if self.has_room().await {
            Ok(())
        } else {
            tracing::warn!(
                cap = self.cap,
                "legacy sessions at their cap; initialize refused"
            );
            Err(Refusal::Full)
        }
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
        match self.backend.touch(id, &principal.tag(), ttl_ms()).await {
            Ok(true) => {
                // Not in memory here: rmcp restores it from the store, if there is room.
                let here = self.memory.sessions.read().await.contains_key(id);
                if here || self.has_room().await {
                    Ok(())
                } else {
                    Err(Refusal::Full)
                }
            }
            Ok(false) => {
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
            .map(|message| kept_params(&message["params"]))
            .filter(|params| {
                serde_json::from_value::<InitializeRequestParams>(params.clone()).is_ok()
            });
        let Some(params) = params else {
            // rmcp opened a session for something it read as `initialize`, but its params do
            // not read back: with no record, every later request of it gets 404.
            tracing::warn!("a new session's initialize params could not be read; not kept");
            return Err(Refusal::NotFound);
        };
        let initialize = params.to_string();
        if initialize.len() > MAX_STORED_PARAMS {
            return Err(Refusal::TooLarge);
        }
        let record = SessionRecord {
            owner: opener.tag(),
            initialize,
        };
        match self.backend.create(id, &record, ttl_ms()).await {
            Ok(true) => {
                crate::metrics::session_opened();
                Ok(())
            }
            Ok(false) => {
                tracing::error!("rmcp opened a session under an id already stored; refused");
                Err(Refusal::Unavailable)
            }
            Err(e) => {
                crate::metrics::store_error("session");
                tracing::error!(error = %e, "store unavailable while recording a session");
                Err(Refusal::Unavailable)
            }
        }
    }
}

/// Whether the request names a modern-era protocol version (2026-07-28 or later), which
/// never belongs to a session.
pub fn is_modern(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .is_some_and(|v| v.as_bytes() >= b"2026-07-28".as_slice())
}

/// Whether `body` is an `initialize` request (only its `method` is read).
fn opens_session(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Method<'_>>(body)
        .is_ok_and(|m| m.method.as_deref() == Some("initialize"))
}

/// What a restore needs of `initialize` params: the version, capabilities and client info.
fn kept_params(params: &Value) -> Value {
    let mut kept = Map::new();
    for key in ["protocolVersion", "capabilities", "clientInfo"] {
        if let Some(value) = params.get(key) {
            kept.insert(key.to_owned(), value.clone());
        }
    }
    Value::Object(kept)
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
        // The edge has checked (and extended) the session for its owner just before.
        let Some(record) = self.0.get(session_id).await? else {
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

/// Bounds the waits for a sign-in to land ([`notify_when_connected`]): in all, and per
/// caller, so that one caller's retries cannot use up everyone's.
pub struct CompletionNotices {
    total: Arc<Semaphore>,
    per_caller: Mutex<HashMap<String, usize>>,
}

/// Waits one caller may have at once.
const NOTICES_PER_CALLER: usize = 8;

/// One wait's place; given back when dropped.
struct NoticeSlot {
    notices: Arc<CompletionNotices>,
    caller: String,
    _permit: OwnedSemaphorePermit,
}

impl CompletionNotices {
    pub fn new(total: usize) -> Arc<Self> {
        Arc::new(Self {
            total: Arc::new(Semaphore::new(total)),
            per_caller: Mutex::new(HashMap::new()),
        })
    }

    fn take(self: &Arc<Self>, caller: String) -> Option<NoticeSlot> {
        let permit = self.total.clone().try_acquire_owned().ok()?;
        let mut counts = self.per_caller.lock().expect("never poisoned");
        let count = counts.entry(caller.clone()).or_default();
        if *count >= NOTICES_PER_CALLER {
            return None;
        }
        *count += 1;
        Some(NoticeSlot {
            notices: self.clone(),
            caller,
            _permit: permit,
        })
    }
}

impl Drop for NoticeSlot {
    fn drop(&mut self) {
        let mut counts = self.notices.per_caller.lock().expect("never poisoned");
        if let Some(count) = counts.get_mut(&self.caller) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.caller);
            }
        }
    }
}

/// Sends `notifications/elicitation/complete` to the session once `principal` has connected
/// `elicitation.provider`, waiting at most `until` (the link's lifetime). Past the bounds of
/// `notices`, the client simply learns by retrying.
pub fn notify_when_connected(
    state: AppState,
    notices: &Arc<CompletionNotices>,
    principal: Principal,
    elicitation: &UrlElicitation,
    peer: Peer<RoleServer>,
    until: Duration,
) {
    let Some(slot) = notices.take(principal.tag()) else {
        return;
    };
    let key = GrantKey {
        principal,
        provider: elicitation.provider.clone(),
    };
    let elicitation_id = elicitation.elicitation_id.clone();
    tokio::spawn(async move {
        let _slot = slot;
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
/// completes. A question left unanswered (or not askable) changes nothing.
///
/// rmcp numbers a session's questions per replica, so two replicas asking in one session at
/// once could each have a question with the same id, and an answer routed to the wrong one
/// would answer the wrong question. A lease in the store makes the session's questions one at
/// a time across the replicas; a misrouted answer then meets no question and is dropped.
pub async fn drive_rounds<F, Fut>(
    state: &AppState,
    ctx: &RequestContext<RoleServer>,
    mut params: CallToolRequestParams,
    mut round: F,
) -> Result<CallToolResponse, ErrorData>
where
    F: FnMut(CallToolRequestParams) -> Fut,
    Fut: Future<Output = Result<CallToolResponse, ErrorData>>,
{
    let timeout = state.config.elicitation_timeout;
    let lease = format!(
        "legacy-question:{}",
        request_session(ctx).unwrap_or_default()
    );
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
            let holder = crate::seal::random_id();
            let ttl_ms = (timeout + LEASE_MARGIN).as_millis() as i64;
            match state.leases.try_acquire(&lease, &holder, ttl_ms).await {
                Ok(true) => {}
                Ok(false) => return Ok(unasked(ANOTHER_QUESTION)),
                Err(e) => {
                    crate::metrics::store_error("session");
                    tracing::error!(error = %e, "store unavailable before asking a question");
                    return Ok(unasked(STORE_DOWN));
                }
            }
            let answer = ctx
                .peer
                .create_elicitation_with_timeout(ask, Some(timeout))
                .await;
            if let Err(e) = state.leases.release(&lease, &holder).await {
                tracing::warn!(error = %e, "a question's lease was not released; it expires");
            }
            match answer {
                Ok(answer) => {
                    answers.insert(key, serde_json::to_value(answer).map_err(internal)?);
                }
                Err(ServiceError::Timeout { .. }) => {
                    return Ok(unasked(&format!(
                        "No answer came within {} seconds",
                        timeout.as_secs()
                    )));
                }
                Err(e) => {
                    tracing::info!(error = %e, "elicitation/create failed; nothing changed");
                    return Ok(unasked("The question could not be asked"));
                }
            }
        }
        params.request_state = required["requestState"].as_str().map(str::to_owned);
        params.input_responses = Some(from_json(Value::Object(answers)));
    }
    Err(internal("too many rounds"))
}

/// A question's lease outlives its timeout by this much.
const LEASE_MARGIN: Duration = Duration::from_secs(30);
const ANOTHER_QUESTION: &str =
    "Another question is waiting for its answer in this session; answer it first, then ask again";
const STORE_DOWN: &str = "grantry's store is unavailable, so the question was not asked";

/// The call's end when its question got no answer: nothing was changed.
fn unasked(why: &str) -> CallToolResponse {
    complete(ToolResult::error(format!("{why}. Nothing was changed.")))
}

/// The `Mcp-Session-Id` of the request behind `ctx`.
fn request_session(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|parts| session_id(parts))
        .map(str::to_owned)
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, e.to_string(), None)
}
