//! Legacy sessions as the edge sees them: each recorded in the store with its opener once
//! rmcp has answered its `initialize`, checked against the caller on every request that
//! names it, and capped in memory (`--max-legacy-sessions`). rmcp restores a session it has
//! not seen from the record ([`RmcpSessions`]).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use serde_json::{Map, Value};

use crate::identity::Principal;
use crate::sessions::{SessionBackend, SessionRecord};

/// The session header (rmcp's name for it).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// An unused session is forgotten after this long; each request pushes it on.
const SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The most of a client's `initialize` params kept for a restore (its version, capabilities
/// and client info are what a restore replays).
const MAX_STORED_PARAMS: usize = 16 * 1024;

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
