//! Legacy sessions as the edge sees them: each recorded in the store with its opener once
//! rmcp has answered its `initialize`, checked against the caller on every request that
//! names it, and kept in memory within a fair share of `--max-legacy-sessions`
//! ([`Residents`]). rmcp restores a session it has not seen from the record
//! ([`RmcpSessions`]).

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use serde_json::{Map, Value};

use crate::identity::Principal;
use crate::mcp_legacy::residents::{Crowded, InUse, Reservation, Residents};
use crate::mcp_wire::headers::MCP_SESSION_ID;
use crate::sessions::{Created, SessionBackend, SessionRecord};

/// An unused session is forgotten after this long; each request pushes it on.
const SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The most of a client's `initialize` params kept for a restore (its version, capabilities
/// and client info without icons are what a restore replays; real clients send well under
/// one kilobyte). With the cap on sessions per principal, this bounds what one principal
/// can make the store keep.
const MAX_STORED_PARAMS: usize = 4 * 1024;

/// The sessions in the store, as the edge and rmcp use them, and which of them rmcp keeps in
/// memory here (each costs tens of kilobytes while it lives).
#[derive(Clone)]
pub(crate) struct Sessions {
    backend: Arc<dyn SessionBackend>,
    memory: Arc<LocalSessionManager>,
    residents: Arc<Residents>,
    /// Sessions one principal keeps in the store; a new one past it forgets their least
    /// recently used.
    keep: usize,
}

/// Why the edge stops a request before rmcp.
pub(crate) enum Refusal {
    /// No such session for this caller: the spec's answer for an unknown session.
    NotFound,
    /// The `initialize` params are larger than a session may keep.
    TooLarge,
    /// No room in memory here, and nothing idle to make room with: retry later.
    Full(Crowded),
    /// The store could not be read: retry later.
    Unavailable,
}

impl Refusal {
    pub(crate) fn into_response(self) -> Response {
        let (status, text) = match self {
            Self::NotFound => (StatusCode::NOT_FOUND, "Not Found: Session not found"),
            Self::TooLarge => (
                StatusCode::BAD_REQUEST,
                "Bad Request: the initialize params are too large to keep a session for",
            ),
            Self::Full(Crowded::Share) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: every legacy-era session one user may keep here is in \
                 use; end one (DELETE), retry in a minute, or use protocol 2026-07-28 (no \
                 sessions)",
            ),
            Self::Full(Crowded::Total) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: grantry holds as many legacy-era sessions as it may, all \
                 in use; retry in a minute, or use protocol 2026-07-28 (no sessions)",
            ),
            Self::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "grantry's store is unavailable; retry in a moment",
            ),
        };
        crate::mcp_legacy::plain_refusal(status, text, status == StatusCode::SERVICE_UNAVAILABLE)
    }
}

impl Sessions {
    /// At most `cap` sessions in memory here, `share` of them one principal's; and at most
    /// `keep` of one principal's in the store.
    pub(crate) fn new(
        backend: Arc<dyn SessionBackend>,
        memory: Arc<LocalSessionManager>,
        cap: usize,
        share: usize,
        keep: usize,
    ) -> Self {
        Self {
            backend,
            memory,
            residents: Residents::new(cap, share),
            keep,
        }
    }

    /// rmcp's view: it restores sessions from the records the edge writes.
    pub(crate) fn for_rmcp(&self) -> Arc<dyn SessionStore> {
        Arc::new(RmcpSessions(self.backend.clone()))
    }

    /// A request naming a session must come from the principal who opened it: anyone else
    /// is told the session does not exist. Using it keeps it alive (in the store), and in
    /// use here until the answer is done (keep the [`InUse`] that long).
    pub(crate) async fn check_owner(&self, parts: &Parts) -> Result<Option<InUse>, Refusal> {
        match session_id(parts) {
            Some(id) => self.owner_uses(parts, id).await.map(Some),
            None => Ok(None),
        }
    }

    /// Before rmcp takes a request outside any session: an `initialize` (whatever version
    /// header it carries: it always opens a legacy session) must fit, its params under the
    /// size a record keeps and room in memory here. Its [`Opening`] records the session rmcp
    /// opens. Any other request passes (only its `method` is read).
    pub(crate) async fn opening(
        &self,
        parts: &Parts,
        body: &[u8],
    ) -> Result<Option<Opening>, Refusal> {
        if session_id(parts).is_some() {
            return Ok(None);
        }
        let (Some(params), Some(opener)) =
            (initialize_params(body), parts.extensions.get::<Principal>())
        else {
            return Ok(None); // not an `initialize` rmcp can take: it refuses it itself
        };
        if params.len() > MAX_STORED_PARAMS {
            return Err(Refusal::TooLarge);
        }
        let owner: String = opener.tag().into();
        let place = self.make_room(&owner).await?;
        Ok(Some(Opening {
            sessions: self.clone(),
            place,
            record: SessionRecord {
                owner,
                initialize: params,
            },
        }))
    }

    /// Room in memory for one more session of `owner`, or why there is none.
    async fn make_room(&self, owner: &str) -> Result<Reservation, Refusal> {
        self.residents
            .make_room(owner, &self.memory)
            .await
            .map_err(|crowded| {
                tracing::warn!(
                    ?crowded,
                    "no legacy session idle to make room with; refused"
                );
                Refusal::Full(crowded)
            })
    }

    async fn owner_uses(&self, parts: &Parts, id: &str) -> Result<InUse, Refusal> {
        let Some(principal) = parts.extensions.get::<Principal>() else {
            return Err(Refusal::NotFound);
        };
        let owner = principal.tag();
        match self.backend.touch(id, &owner, ttl_ms()).await {
            Ok(true) => {
                // Not in memory here: rmcp restores it from the store, into room made for it.
                let live = self.memory.sessions.read().await.contains_key(id);
                if !live {
                    let place = self.make_room(&owner).await?;
                    self.residents.settle(place, id);
                }
                Ok(self.residents.use_session(id, &owner))
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
}

/// An `initialize` the edge let through: the record of the session rmcp opens for it, and
/// the room made for it in memory.
pub(crate) struct Opening {
    sessions: Sessions,
    place: Reservation,
    record: SessionRecord,
}

impl Opening {
    /// rmcp opened the session `id`: stores its record before the client can use it. If that
    /// fails, rmcp's session is closed too, so nothing is left half made.
    pub(crate) async fn record(self, id: &str) -> Result<(), Refusal> {
        let Sessions {
            backend,
            memory,
            residents,
            keep,
        } = &self.sessions;
        let refusal = match backend.create(id, &self.record, ttl_ms(), *keep).await {
            Ok(Created::Stored { forgotten }) => {
                crate::metrics::session_opened();
                residents.settle(self.place, id);
                forget(memory, &forgotten).await;
                return Ok(());
            }
            Ok(Created::Taken) => {
                tracing::error!("rmcp opened a session under an id already stored; refused");
                Refusal::Unavailable
            }
            Err(e) => {
                crate::metrics::store_error("session");
                tracing::error!(error = %e, "store unavailable while recording a session");
                Refusal::Unavailable
            }
        };
        if let Err(e) = memory.close_session(&id.to_owned().into()).await {
            tracing::warn!(error = %e, "an unrecorded session could not be closed; it idles out");
        }
        Err(refusal)
    }
}

/// Takes the sessions the store forgot (their owner opened more than they may keep) out of
/// memory here too; another replica's copy idles out, and its next use is answered 404.
async fn forget(memory: &LocalSessionManager, forgotten: &[String]) {
    if forgotten.is_empty() {
        return;
    }
    tracing::info!(
        forgotten = forgotten.len(),
        "a principal opened more legacy sessions than it may keep; its least recently used \
         are forgotten"
    );
    for id in forgotten {
        let id: std::sync::Arc<str> = id.as_str().into();
        if memory.sessions.read().await.contains_key(&id) {
            let _ = memory.close_session(&id).await;
        }
    }
}

/// Whether `body` is an `initialize` whose params rmcp takes (and so opens a legacy session
/// with); any other `initialize` is an unknown method of the modern era.
pub(crate) fn is_initialize(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Initialize {
        #[serde(rename = "params")]
        _params: InitializeRequestParams,
    }
    serde_json::from_slice::<Initialize>(body).is_ok()
}

/// The params of an `initialize` request, as a record keeps them (its version,
/// capabilities and client info: what a restore replays); `None` for any other body, or
/// params rmcp could not take either.
fn initialize_params(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        params: Option<&'a serde_json::value::RawValue>,
    }
    let message = serde_json::from_slice::<Message<'_>>(body).ok()?;
    if message.method? != "initialize" {
        return None;
    }
    // Only an `initialize`'s params are read into values.
    let params: Value = match message.params {
        Some(raw) => serde_json::from_str(raw.get()).ok()?,
        None => Value::Null,
    };
    let mut kept = Map::new();
    for key in ["protocolVersion", "capabilities", "clientInfo"] {
        if let Some(value) = params.get(key) {
            kept.insert(key.to_owned(), value.clone());
        }
    }
    // Icons (often data URIs) are for a host's display; a restore has no use for them.
    if let Some(Value::Object(info)) = kept.get_mut("clientInfo") {
        info.remove("icons");
    }
    let kept = Value::Object(kept);
    serde_json::from_value::<InitializeRequestParams>(kept.clone()).ok()?;
    Some(kept.to_string())
}

/// The session a response opened (rmcp names it in the header of its `initialize` answer).
pub(crate) fn opened_session(response: &Response) -> Option<String> {
    response
        .headers()
        .get(&MCP_SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub(crate) fn session_id(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(&MCP_SESSION_ID)
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
