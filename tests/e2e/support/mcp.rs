//! A raw MCP 2026-07-28 client: every request is built by hand, so the tests see the wire.

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

pub const VERSION: &str = "2026-07-28";

pub fn url_and_form() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}})
}

/// Both elicitation modes and the Tasks extension.
pub fn with_tasks() -> Value {
    json!({"elicitation": {"form": {}, "url": {}},
           "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

pub struct Mcp {
    http: reqwest::Client,
    pub url: String,
    /// Sent as `Authorization: Bearer` on every request (oidc identity).
    pub bearer: Option<String>,
    next_id: std::sync::atomic::AtomicI64,
}

/// One HTTP answer from `/mcp`, with the JSON-RPC message parsed (from JSON or SSE).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub raw: String,
    pub body: Value,
}

impl Answer {
    /// The sign-in round of an `input_required` answer: (link, requestState, inputRequests key).
    pub fn sign_in_round(&self) -> (String, String, String) {
        let r = self.result();
        assert_eq!(r["resultType"], "input_required", "{}", self.raw);
        let (key, request) = r["inputRequests"]
            .as_object()
            .unwrap()
            .iter()
            .next()
            .unwrap();
        (
            request["params"]["url"].as_str().unwrap().to_owned(),
            r["requestState"].as_str().unwrap().to_owned(),
            key.clone(),
        )
    }

    pub fn result(&self) -> &Value {
        assert!(
            self.body.get("result").is_some(),
            "expected a result, got HTTP {}: {}",
            self.status,
            self.raw
        );
        &self.body["result"]
    }

    pub fn error_code(&self) -> i64 {
        self.body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("expected an error, got HTTP {}: {}", self.status, self.raw))
    }

    pub fn is_sse(&self) -> bool {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
    }
}

pub fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "grantry-e2e", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

impl Mcp {
    pub fn new(url: String) -> Self {
        Self {
            http: reqwest::Client::new(),
            url,
            bearer: None,
            next_id: 1.into(),
        }
    }

    /// A client that authenticates every request with `token`.
    pub fn with_bearer(url: String, token: String) -> Self {
        Self {
            bearer: Some(token),
            ..Self::new(url)
        }
    }

    fn id(&self) -> i64 {
        self.next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// A well-formed request: headers agree with the body.
    pub async fn request(&self, method: &str, params: Value, capabilities: Value) -> Answer {
        self.request_with(method, params, meta(capabilities), &[])
            .await
    }

    /// A `tools/call` whose `_meta` also holds `extra` (a `traceparent`, say), sent with the
    /// `headers` added.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        extra: Value,
        headers: &[(&'static str, String)],
    ) -> Answer {
        let mut meta = meta(url_and_form());
        for (key, value) in extra.as_object().into_iter().flatten() {
            meta[key] = value.clone();
        }
        let params = json!({"name": name, "arguments": arguments});
        self.request_with("tools/call", params, meta, headers).await
    }

    async fn request_with(
        &self,
        method: &str,
        mut params: Value,
        meta: Value,
        extra_headers: &[(&'static str, String)],
    ) -> Answer {
        params["_meta"] = meta;
        // Mcp-Name: a tool's name, a resource's URI, or a task's id.
        let name = params["name"]
            .as_str()
            .or(params["uri"].as_str())
            .or(params["taskId"].as_str())
            .map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": self.id(), "method": method, "params": params});
        let mut headers = vec![
            ("mcp-protocol-version", VERSION.to_owned()),
            ("mcp-method", method.to_owned()),
        ];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        // SEP-2243: grantry's tools mirror `provider` into a header, as a client must send it.
        if let Some(provider) = params["arguments"]["provider"].as_str() {
            headers.push(("mcp-param-provider", header_value(provider)));
        }
        headers.extend(extra_headers.iter().cloned());
        self.raw(&headers, body.to_string()).await
    }

    /// Calls `list_invoices` with no grant yet: returns (link, requestState, key).
    pub async fn first_round(&self) -> (String, String, String) {
        self.call_tool("list_invoices", json!({}), url_and_form())
            .await
            .sign_in_round()
    }

    pub async fn call_tool(&self, name: &str, arguments: Value, capabilities: Value) -> Answer {
        self.request(
            "tools/call",
            json!({"name": name, "arguments": arguments}),
            capabilities,
        )
        .await
    }

    /// `list_connections`' structured result: the caller's connections and `manage_at`.
    pub async fn connections(&self) -> Value {
        let listed = self
            .call_tool("list_connections", json!({}), url_and_form())
            .await;
        listed.result()["structuredContent"].clone()
    }

    /// The retry of a round: same name and arguments, the input responses and the state.
    pub async fn retry(
        &self,
        name: &str,
        arguments: Value,
        input_responses: Value,
        request_state: &str,
    ) -> Answer {
        self.request(
            "tools/call",
            json!({
                "name": name,
                "arguments": arguments,
                "inputResponses": input_responses,
                "requestState": request_state,
            }),
            url_and_form(),
        )
        .await
    }

    /// The retry of `list_invoices {}` accepting the round's `key`, sent in the background:
    /// the retry a client holds open while the test signs in.
    pub fn held_retry(
        self: &std::sync::Arc<Self>,
        key: String,
        state: String,
    ) -> tokio::task::JoinHandle<Answer> {
        let mcp = self.clone();
        tokio::spawn(async move {
            mcp.retry(
                "list_invoices",
                json!({}),
                json!({ key: {"action": "accept"} }),
                &state,
            )
            .await
        })
    }

    /// Sends `body` with exactly `headers` (plus content type and accept).
    pub async fn raw(&self, headers: &[(&str, String)], body: String) -> Answer {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(token) = &self.bearer {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.send().await.expect("grantry answers");
        let status = response.status();
        let headers = response.headers().clone();
        let raw = response.text().await.unwrap();
        let body = parse_message(&raw);
        let request_state = body["result"]["requestState"].as_str();
        super::leaks::record("requestState", request_state);
        super::leaks::record("taskId", body["result"]["taskId"].as_str());
        super::leaks::record("bearer", self.bearer.as_deref());
        Answer {
            status,
            headers,
            raw,
            body,
        }
    }
}

/// An `Mcp-Param-*` value as SEP-2243 writes it: plain visible ASCII as is, anything else
/// `=?base64?…?=`.
pub fn header_value(value: &str) -> String {
    use base64::Engine as _;
    let plain = !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
        && value.trim() == value;
    if plain {
        value.to_owned()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("=?base64?{encoded}?=")
    }
}

/// The JSON-RPC message of a JSON body, or the last `data:` event of an SSE body.
pub fn parse_message(raw: &str) -> Value {
    if let Ok(v) = serde_json::from_str(raw) {
        return v;
    }
    raw.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .rfind(|m| m.get("result").is_some() || m.get("error").is_some())
        .unwrap_or(Value::Null)
}
