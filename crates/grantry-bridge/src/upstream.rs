//! The server's side: one POST per JSON-RPC request, Streamable HTTP 2026-07-28 (the
//! routing headers, `Mcp-Param-*` for arguments a tool mirrors, answers as JSON or as an SSE
//! stream whose notifications are handed on).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use tokio::time::Instant;
use url::Url;

pub(super) use super::answer::Reply;
use super::answer::{self, NotAReply};
use super::auth::{self, AuthError, Authorizer};
use super::body::{self, BodyError};
use super::headers;
use super::mirrors::{Invalid, Mirrors};
use super::sse::Events;
use crate::args::StaticHeader;

/// Largest answer read from the server (a JSON answer, or a whole SSE stream).
const MAX_ANSWER_BYTES: usize = 16 << 20;
const ANSWER: &str = "the server's answer";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A request not otherwise bounded (not a held sign-in retry) gives up after this.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// Why no answer came from the server. Never shows a token or a header value.
#[derive(Debug, thiserror::Error)]
pub(super) enum UpstreamError {
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("no answer from the server in time")]
    TimedOut,
    #[error("the server refused the request's credentials (HTTP 401)")]
    Unauthorized {
        /// The `WWW-Authenticate` challenge.
        challenge: Option<String>,
        /// The bearer token sent, if the bridge's own.
        sent: Option<SentToken>,
    },
    #[error(
        "the server refused the request's scope (HTTP 403 insufficient_scope{})",
        named_scope(challenge)
    )]
    InsufficientScope {
        /// The `WWW-Authenticate` challenge, naming the scope needed.
        challenge: String,
        sent: Option<SentToken>,
    },
    #[error("the server asks for authorization, which did not succeed: {0}")]
    Authorization(#[from] AuthError),
    #[error(transparent)]
    NotAReply(#[from] NotAReply),
    #[error(transparent)]
    Body(#[from] BodyError),
}

/// The bearer token a refused request carried; `Debug` does not show it.
type SentToken = SecretString;

pub(super) struct Upstream {
    http: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    next_id: AtomicU64,
    /// The arguments each tool mirrors into headers.
    mirrors: Mirrors,
    /// MCP authorization, unless `--header` gives the credentials.
    authorizer: Option<Authorizer>,
}

impl Upstream {
    pub(super) fn new(url: Url, static_headers: &[StaticHeader]) -> Self {
        let mut headers = HeaderMap::new();
        for header in static_headers {
            headers.append(header.name.clone(), header.value.clone());
        }
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("the HTTP client builds with a crypto provider installed");
        Self {
            http,
            url,
            headers,
            next_id: AtomicU64::new(1),
            mirrors: Mirrors::default(),
            authorizer: None,
        }
    }

    /// Answers the server's 401s with MCP authorization, keeping tokens under `cache_dir`.
    pub(super) fn authorize_with(
        &mut self,
        cache_dir: &std::path::Path,
        client: auth::Choice,
        open_with: Option<String>,
    ) {
        self.authorizer = Some(Authorizer::new(
            self.http.clone(),
            self.url.clone(),
            cache_dir,
            client,
            open_with,
        ));
    }

    /// Sends `method` with `params` (whose `_meta` the caller made) and waits for its answer
    /// until `deadline`, handing each notification of an SSE answer to `on_notification`.
    pub(super) async fn request(
        &self,
        method: &str,
        params: Value,
        deadline: Option<Instant>,
        on_notification: &(dyn Fn(Value) + Sync),
    ) -> Result<Reply, UpstreamError> {
        let deadline = deadline.unwrap_or_else(|| Instant::now() + REQUEST_TIMEOUT);
        let exchange = self.authorized_exchange(method, params, on_notification);
        let mut reply = tokio::time::timeout_at(deadline, exchange)
            .await
            .map_err(|_| UpstreamError::TimedOut)??;
        if method == "tools/list"
            && let Ok(result) = &mut reply
        {
            self.mirrors.learn(result);
        }
        Ok(reply)
    }

    /// One exchange; after a 401, authorization (or a refresh), and after a 403 for want of
    /// scope, a sign-in for more: each at most once per request, the exchange again after it.
    async fn authorized_exchange(
        &self,
        method: &str,
        params: Value,
        on_notification: &(dyn Fn(Value) + Sync),
    ) -> Result<Reply, UpstreamError> {
        let Some(authorizer) = &self.authorizer else {
            return self.exchange(method, &params, on_notification).await;
        };
        let (mut renewed, mut stepped_up) = (false, false);
        loop {
            match self.exchange(method, &params, on_notification).await {
                Err(UpstreamError::Unauthorized { challenge, sent }) if !renewed => {
                    renewed = true;
                    let sent = sent.as_ref().map(ExposeSecret::expose_secret);
                    authorizer.renew(challenge.as_deref(), sent).await?;
                }
                Err(UpstreamError::InsufficientScope { challenge, sent }) if !stepped_up => {
                    stepped_up = true;
                    let sent = sent.as_ref().map(ExposeSecret::expose_secret);
                    authorizer.step_up(&challenge, sent).await?;
                }
                other => return other,
            }
        }
    }

    async fn exchange(
        &self,
        method: &str,
        params: &Value,
        on_notification: &(dyn Fn(Value) + Sync),
    ) -> Result<Reply, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut headers = headers::for_request(&self.headers, &self.mirrors, method, params);
        let sent = match &self.authorizer {
            Some(authorizer) => authorizer.access_token().await,
            None => None,
        };
        if let Some(token) = &sent
            && let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {token}"))
        {
            value.set_sensitive(true);
            headers.insert(http::header::AUTHORIZATION, value);
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self
            .http
            .post(self.url.clone())
            .headers(headers)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| self.unreachable(&e))?;
        let status = response.status();
        let challenge = response
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if status == StatusCode::UNAUTHORIZED {
            return Err(UpstreamError::Unauthorized {
                challenge,
                sent: sent.map(SecretString::from),
            });
        }
        if let Some(challenge) = challenge.as_deref().filter(|c| {
            status == StatusCode::FORBIDDEN
                && self.authorizer.is_some()
                && auth::challenge_parameter(c, "error").as_deref() == Some("insufficient_scope")
        }) {
            return Err(UpstreamError::InsufficientScope {
                challenge: challenge.to_owned(),
                sent: sent.map(SecretString::from),
            });
        }
        let is_sse = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let message = if is_sse {
            self.read_stream(response, id, on_notification).await?
        } else {
            let bytes = body::read(response, ANSWER, MAX_ANSWER_BYTES).await?;
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        };
        let error = challenge.and_then(|c| auth::challenge_parameter(&c, "error"));
        Ok(answer::reply_of(message, id, status, error.as_deref())?)
    }

    /// Reads an SSE answer until the message that answers `id`.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        id: u64,
        on_notification: &(dyn Fn(Value) + Sync),
    ) -> Result<Value, UpstreamError> {
        let mut events = Events::default();
        let mut read = 0usize;
        while let Some(chunk) = response.chunk().await.map_err(|e| self.unreachable(&e))? {
            read += chunk.len();
            if read > MAX_ANSWER_BYTES {
                return Err(BodyError::TooLarge {
                    what: ANSWER,
                    limit: MAX_ANSWER_BYTES,
                }
                .into());
            }
            for data in events.push(&chunk) {
                let message: Value = serde_json::from_str(&data)
                    .map_err(|e| NotAReply::Garbled(format!("an event: {e}")))?;
                if message.get("id") == Some(&json!(id)) {
                    return Ok(message);
                }
                if message.get("method").is_some() && message.get("id").is_none() {
                    on_notification(message);
                }
            }
        }
        Err(NotAReply::Garbled("the stream ended without an answer".into()).into())
    }

    fn unreachable(&self, error: &reqwest::Error) -> UpstreamError {
        if error.is_timeout() {
            return UpstreamError::TimedOut;
        }
        UpstreamError::Unreachable {
            url: self.url.to_string(),
            reason: grantry_base::net::transport_reason(error),
        }
    }

    /// Whether the server is on this machine (its links to this machine may then be opened).
    pub(super) fn is_local(&self) -> bool {
        grantry_base::net::is_loopback(&self.url)
    }

    /// Whether a `tools/list` told which arguments each tool mirrors into headers.
    pub(super) fn knows_mirrors(&self) -> bool {
        self.mirrors.known()
    }

    /// Why `tool` was left out of the listing, if it was.
    pub(super) fn left_out(&self, tool: &str) -> Option<Invalid> {
        self.mirrors.of(tool).err()
    }
}

/// `; it asks for "…"`, the scope a 403 challenge names, if it names one.
fn named_scope(challenge: &str) -> String {
    auth::challenge_parameter(challenge, "scope")
        .map(|scope| format!("; it asks for \"{scope}\""))
        .unwrap_or_default()
}
