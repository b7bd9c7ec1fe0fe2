//! A raw MCP 2025-11-25 (legacy era) client: `initialize`, a session, SSE streams read as
//! they come, and answers to the server's `elicitation/create` requests.

use std::time::Duration;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::mcp::{Answer, parse_message};

pub const LEGACY: &str = "2025-11-25";

pub struct LegacySession {
    http: reqwest::Client,
    url: String,
    bearer: Option<String>,
    /// The `Mcp-Session-Id` the server gave.
    pub id: String,
    /// The `initialize` answer.
    pub initialized: Answer,
    next_id: std::sync::atomic::AtomicI64,
}

/// Sends `initialize` at 2025-11-25 with `capabilities` (and `bearer`, if any); the answer.
pub async fn initialize(url: &str, bearer: Option<&str>, capabilities: Value) -> Answer {
    let params = json!({
        "protocolVersion": LEGACY,
        "capabilities": capabilities,
        "clientInfo": {"name": "grantry-e2e-legacy", "version": "1"},
    });
    initialize_with(url, bearer, params).await
}

/// Sends `initialize` with exactly `params`; the answer.
pub async fn initialize_with(url: &str, bearer: Option<&str>, params: Value) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    answer(request.send().await.expect("grantry answers")).await
}

async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let raw = response.text().await.unwrap();
    let body = parse_message(&raw);
    Answer {
        status,
        headers,
        raw,
        body,
    }
}

impl LegacySession {
    /// `initialize` then `notifications/initialized`: a session ready for requests.
    pub async fn open(url: &str, bearer: Option<&str>, capabilities: Value) -> LegacySession {
        let initialized = initialize(url, bearer, capabilities).await;
        assert_eq!(initialized.status, StatusCode::OK, "{}", initialized.raw);
        let id = initialized
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("initialize opens a session")
            .to_owned();
        let session = LegacySession {
            http: reqwest::Client::new(),
            url: url.to_owned(),
            bearer: bearer.map(str::to_owned),
            id,
            initialized,
            next_id: 1.into(),
        };
        let status = session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
            .status();
        assert_eq!(status, StatusCode::ACCEPTED);
        session
    }

    /// The same session as another client (another token, or another replica's URL) uses it.
    pub fn as_seen_by(&self, url: &str, bearer: Option<&str>) -> LegacySession {
        LegacySession {
            http: reqwest::Client::new(),
            url: url.to_owned(),
            bearer: bearer.map(str::to_owned),
            id: self.id.clone(),
            initialized: Answer {
                status: self.initialized.status,
                headers: self.initialized.headers.clone(),
                raw: self.initialized.raw.clone(),
                body: self.initialized.body.clone(),
            },
            next_id: 1000.into(),
        }
    }

    fn with_session(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let request = request
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", LEGACY);
        match &self.bearer {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    async fn post(&self, message: Value) -> reqwest::Response {
        self.with_session(self.http.post(&self.url))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(message.to_string())
            .send()
            .await
            .expect("grantry answers")
    }

    fn id(&self) -> i64 {
        self.next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// A request in the session as raw text (a body no JSON value can stand for); its one
    /// answer.
    pub async fn request_raw(&self, body: &str) -> Answer {
        let response = self
            .with_session(self.http.post(&self.url))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned())
            .send()
            .await
            .expect("grantry answers");
        answer(response).await
    }

    /// A request in the session; its one answer.
    pub async fn request(&self, method: &str, params: Value) -> Answer {
        let message =
            json!({"jsonrpc": "2.0", "id": self.id(), "method": method, "params": params});
        answer(self.post(message).await).await
    }

    pub async fn call_tool(&self, name: &str, arguments: Value) -> Answer {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Calls `name`, answering each `elicitation/create` the server sends on the call's
    /// stream with `reply(params)`. Returns the questions asked and the call's answer.
    pub async fn call_answering(
        &self,
        name: &str,
        arguments: Value,
        reply: impl Fn(&Value) -> Value,
    ) -> (Vec<Value>, Value) {
        self.call_maybe_answering(name, arguments, |q| Some(reply(q)))
            .await
    }

    /// As [`Self::call_answering`], the answers sent by `answerer` (the same session as
    /// another token uses it).
    pub async fn call_answered_by(
        &self,
        answerer: &LegacySession,
        name: &str,
        arguments: Value,
        reply: impl Fn(&Value) -> Value,
    ) -> (Vec<Value>, Value) {
        self.call_answering_through(answerer, name, arguments, |q| Some(reply(q)))
            .await
    }

    /// As [`Self::call_answering`]; a `None` reply leaves the question unanswered.
    pub async fn call_maybe_answering(
        &self,
        name: &str,
        arguments: Value,
        reply: impl Fn(&Value) -> Option<Value>,
    ) -> (Vec<Value>, Value) {
        self.call_answering_through(self, name, arguments, reply)
            .await
    }

    async fn call_answering_through(
        &self,
        answerer: &LegacySession,
        name: &str,
        arguments: Value,
        reply: impl Fn(&Value) -> Option<Value>,
    ) -> (Vec<Value>, Value) {
        let id = self.id();
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        let response = self.post(call).await;
        assert_eq!(response.status(), StatusCode::OK);
        let mut events = Events::new(response);
        let mut asked = Vec::new();
        while let Some(message) = events.next().await {
            if message["method"] == "elicitation/create" {
                asked.push(message["params"].clone());
                let Some(result) = reply(&message["params"]) else {
                    continue;
                };
                let status = answerer
                    .post(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                    .await
                    .status();
                assert_eq!(status, StatusCode::ACCEPTED, "the answer is taken");
            } else if message["id"] == json!(id) {
                return (asked, message);
            }
        }
        panic!("the call's stream ended without its answer");
    }

    /// Asks for a GET stream of the session: the answer as it comes (a stream is open while
    /// the response lives).
    pub async fn get_stream(&self) -> reqwest::Response {
        self.with_session(self.http.get(&self.url))
            .header("accept", "text/event-stream")
            .send()
            .await
            .expect("grantry answers")
    }

    /// Opens the session's GET stream; the handle yields the first message whose `method`
    /// is `method`, or `None` if none comes within `wait`.
    pub async fn listen_for(
        &self,
        method: &'static str,
        wait: Duration,
    ) -> tokio::task::JoinHandle<Option<Value>> {
        let response = self
            .with_session(self.http.get(&self.url))
            .header("accept", "text/event-stream")
            .send()
            .await
            .expect("grantry answers");
        assert_eq!(response.status(), StatusCode::OK, "the GET stream opens");
        tokio::spawn(async move {
            let mut events = Events::new(response);
            tokio::time::timeout(wait, async {
                while let Some(message) = events.next().await {
                    if message["method"] == method {
                        return Some(message);
                    }
                }
                None
            })
            .await
            .ok()
            .flatten()
        })
    }

    /// Ends the session (HTTP `DELETE`); the status.
    pub async fn delete(&self) -> StatusCode {
        self.with_session(self.http.delete(&self.url))
            .send()
            .await
            .expect("grantry answers")
            .status()
    }
}

/// The JSON-RPC messages of an SSE body, as they arrive.
struct Events {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Self {
        Self {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                match serde_json::from_str(&data) {
                    Ok(message) => return Some(message),
                    Err(_) => continue, // priming events and keep-alives carry no message
                }
            }
            let chunk = self.body.next().await?.ok()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
