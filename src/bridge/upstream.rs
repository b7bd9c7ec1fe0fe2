//! The server's side: one POST per JSON-RPC request, Streamable HTTP 2026-07-28 (the
//! routing headers, `Mcp-Param-*` for arguments a tool mirrors, answers as JSON or as an SSE
//! stream whose notifications are handed on).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use base64::Engine as _;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::{Value, json};
use tokio::time::Instant;
use url::Url;

use super::auth::{AuthError, Authorizer};
use super::profile::MODERN;
use super::sse::Events;
use crate::config::StaticHeader;

/// Largest answer read from the server.
const MAX_ANSWER_BYTES: usize = 16 << 20;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A request not otherwise bounded (not a held sign-in retry) gives up after this.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// The server's JSON-RPC answer: its `result`, or its `error` object.
pub(super) type Reply = Result<Value, Value>;

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
    #[error("the server asks for authorization (HTTP 401), which did not succeed: {0}")]
    Authorization(#[from] AuthError),
    #[error("the server answered HTTP {0} without a JSON-RPC answer")]
    Status(StatusCode),
    #[error("the server's answer is not a JSON-RPC answer: {0}")]
    Garbled(String),
}

/// The bearer token a refused request carried; `Debug` does not show it.
pub(super) struct SentToken(pub(super) String);

impl std::fmt::Debug for SentToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SentToken(…)")
    }
}

/// One argument a tool mirrors into a header (SEP-2243 `x-mcp-header`).
#[derive(Debug, Clone)]
struct Mirror {
    argument: String,
    header: HeaderName,
}

pub(super) struct Upstream {
    http: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    next_id: AtomicU64,
    /// Per tool name, as the server's last `tools/list` declared them.
    mirrors: Mutex<HashMap<String, Vec<Mirror>>>,
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
            mirrors: Mutex::new(HashMap::new()),
            authorizer: None,
        }
    }

    /// Answers the server's 401s with MCP authorization, keeping tokens under `cache_dir`.
    pub(super) fn authorize_with(
        &mut self,
        cache_dir: &std::path::Path,
        client_id: Option<String>,
        open_with: Option<String>,
    ) {
        self.authorizer = Some(Authorizer::new(
            self.http.clone(),
            self.url.clone(),
            cache_dir,
            client_id,
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
        let reply = tokio::time::timeout_at(deadline, exchange)
            .await
            .map_err(|_| UpstreamError::TimedOut)??;
        if method == "tools/list"
            && let Ok(result) = &reply
        {
            self.learn_mirrors(result);
        }
        Ok(reply)
    }

    /// One exchange; after a 401, authorization (or a refresh) and the exchange once more.
    async fn authorized_exchange(
        &self,
        method: &str,
        params: Value,
        on_notification: &(dyn Fn(Value) + Sync),
    ) -> Result<Reply, UpstreamError> {
        let first = self.exchange(method, &params, on_notification).await;
        let (Err(UpstreamError::Unauthorized { challenge, sent }), Some(authorizer)) =
            (&first, &self.authorizer)
        else {
            return first;
        };
        authorizer
            .renew(
                challenge.as_deref(),
                sent.as_ref().map(|token| token.0.as_str()),
            )
            .await?;
        self.exchange(method, &params, on_notification).await
    }

    async fn exchange(
        &self,
        method: &str,
        params: &Value,
        on_notification: &(dyn Fn(Value) + Sync),
    ) -> Result<Reply, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut headers = self.headers_for(method, params);
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
        if status == StatusCode::UNAUTHORIZED {
            let challenge = response
                .headers()
                .get(http::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            return Err(UpstreamError::Unauthorized {
                challenge,
                sent: sent.map(SentToken),
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
            let bytes = read_capped(response)
                .await
                .map_err(|e| self.unreachable(&e))?;
            serde_json::from_slice(&bytes).map_err(|_| UpstreamError::Status(status))?
        };
        reply_of(message, id)
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
                return Err(UpstreamError::Garbled("the stream is too long".into()));
            }
            for data in events.push(&chunk) {
                let message: Value = serde_json::from_str(&data)
                    .map_err(|e| UpstreamError::Garbled(format!("an event: {e}")))?;
                if message.get("id") == Some(&json!(id)) {
                    return Ok(message);
                }
                if message.get("method").is_some() && message.get("id").is_none() {
                    on_notification(message);
                }
            }
        }
        Err(UpstreamError::Garbled(
            "the stream ended without an answer".into(),
        ))
    }

    fn unreachable(&self, error: &reqwest::Error) -> UpstreamError {
        if error.is_timeout() {
            return UpstreamError::TimedOut;
        }
        UpstreamError::Unreachable {
            url: self.url.to_string(),
            reason: crate::providers::http::transport_reason(error),
        }
    }

    /// The routing headers of 2026-07-28, the `--header`s, and the mirrored arguments.
    fn headers_for(&self, method: &str, params: &Value) -> HeaderMap {
        let mut headers = self.headers.clone();
        let fixed = [
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", MODERN),
        ];
        for (name, value) in fixed {
            headers.insert(name, HeaderValue::from_static(value));
        }
        insert_encoded(&mut headers, HeaderName::from_static("mcp-method"), method);
        let name = match method {
            "tools/call" | "prompts/get" => params["name"].as_str(),
            "resources/read" => params["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            insert_encoded(&mut headers, HeaderName::from_static("mcp-name"), name);
        }
        if method == "tools/call" {
            self.mirror_arguments(&mut headers, params);
        }
        headers
    }

    fn mirror_arguments(&self, headers: &mut HeaderMap, params: &Value) {
        let tool = params["name"].as_str().unwrap_or_default();
        let mirrors = self.mirrors.lock().expect("mirrors lock is never poisoned");
        for mirror in mirrors.get(tool).into_iter().flatten() {
            let value = match &params["arguments"][&mirror.argument] {
                Value::Null => continue,
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            insert_encoded(headers, mirror.header.clone(), &value);
        }
    }

    /// Whether the server is on this machine (its links to this machine may then be opened).
    pub(super) fn is_local(&self) -> bool {
        crate::config::is_loopback(&self.url)
    }

    /// Whether the mirrored arguments of `tool` are known (after a `tools/list`).
    pub(super) fn knows_tool(&self, tool: &str) -> bool {
        let mirrors = self.mirrors.lock().expect("mirrors lock is never poisoned");
        mirrors.contains_key(tool)
    }

    fn learn_mirrors(&self, result: &Value) {
        let Some(tools) = result["tools"].as_array() else {
            return;
        };
        let mut mirrors = self.mirrors.lock().expect("mirrors lock is never poisoned");
        for tool in tools {
            let Some(name) = tool["name"].as_str() else {
                continue;
            };
            mirrors.insert(name.to_owned(), mirrors_of(tool));
        }
    }
}

fn mirrors_of(tool: &Value) -> Vec<Mirror> {
    let Some(properties) = tool["inputSchema"]["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .filter_map(|(argument, schema)| {
            let header = schema["x-mcp-header"].as_str()?;
            let header = HeaderName::try_from(format!("mcp-param-{header}")).ok()?;
            Some(Mirror {
                argument: argument.clone(),
                header,
            })
        })
        .collect()
}

/// Sets a header, base64-wrapped (`=?base64?…?=`) when the value is not plain visible ASCII.
fn insert_encoded(headers: &mut HeaderMap, name: HeaderName, value: &str) {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ');
    let value = if plain {
        HeaderValue::from_str(value).ok()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(value);
        HeaderValue::from_str(&format!("=?base64?{encoded}?=")).ok()
    };
    if let Some(value) = value {
        headers.insert(name, value);
    }
}

async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ANSWER_BYTES {
            break;
        }
    }
    Ok(body)
}

fn reply_of(mut message: Value, id: u64) -> Result<Reply, UpstreamError> {
    if message.get("id") != Some(&json!(id)) && message.get("error").is_none() {
        return Err(UpstreamError::Garbled(
            "an answer to another request".into(),
        ));
    }
    let mut fields = message.as_object_mut();
    let mut take = |name: &str| fields.as_deref_mut().and_then(|f| f.remove(name));
    match (take("result"), take("error")) {
        (Some(result), None) => Ok(Ok(result)),
        (None, Some(error)) => Ok(Err(error)),
        _ => Err(UpstreamError::Garbled("neither result nor error".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_outside_visible_ascii_are_base64_wrapped() {
        let mut headers = HeaderMap::new();
        let name = HeaderName::from_static("mcp-param-provider");
        insert_encoded(&mut headers, name.clone(), "xero");
        assert_eq!(headers[&name], "xero");
        insert_encoded(&mut headers, name.clone(), "Zürich");
        assert_eq!(headers[&name], "=?base64?WsO8cmljaA==?=");
        insert_encoded(&mut headers, name.clone(), " padded");
        assert_eq!(headers[&name], "=?base64?IHBhZGRlZA==?=");
    }

    #[test]
    fn a_tools_x_mcp_header_arguments_are_learned() {
        let tool = json!({"name": "list_invoices", "inputSchema": {"properties": {
            "provider": {"type": "string", "x-mcp-header": "Provider"},
            "status": {"type": "string"},
        }}});
        let mirrors = mirrors_of(&tool);
        assert_eq!(mirrors.len(), 1);
        assert_eq!(mirrors[0].argument, "provider");
        assert_eq!(mirrors[0].header, "mcp-param-provider");
    }
}
