//! `grantry-bridge URL` (also `grantry bridge URL`): a local stdio MCP server for clients that cannot finish a sign-in by
//! themselves. The client launches it like any stdio server; it speaks 2026-07-28 Streamable
//! HTTP to the remote server on the client's behalf, answering URL elicitations by opening
//! the link in the user's browser (or asking the client, where it can show one), passing
//! form questions to clients that can answer them, and holding the call until the sign-in
//! lands.
//!
//! - [`args`]: its options; [`program`]: the program around them (logging, TLS, runtime)
//! - [`stdio`]: the client's side, lines in and out, the bridge's requests to the client
//! - [`wire`]: the JSON-RPC messages of that side
//! - [`profile`]: what the client speaks (handshake era or 2026-07-28) and declared
//! - [`upstream`] (with [`answer`], [`body`], [`sse`], [`headers`] and [`mirrors`]): the
//!   server's side
//! - [`calls`]: a `tools/call`'s rounds: sign-in, questions, waiting, progress
//! - [`links`]: which links are opened, and opening them
//! - [`auth`]: MCP authorization toward a server that asks for it, and the token cache; the
//!   bridge's Client ID Metadata Document, which grantry serves for it
//!
//! It depends on no server crate (`tests/architecture.rs` holds it to that): installed alone
//! it carries no database, template or MCP-server code.

mod answer;
pub mod args;
mod auth;
mod body;
mod calls;
mod headers;
mod links;
mod mirrors;
mod profile;
pub mod program;
mod sse;
mod stdio;
#[cfg(test)]
mod testing;
mod upstream;
mod wire;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::task::AbortHandle;

pub use args::{BridgeArgs, OpenLinks};
pub use auth::document::{PATH as CLIENT_METADATA_PATH, client_metadata_document};
use profile::{ClientProfile, Era, META_CAPABILITIES, META_CLIENT_INFO, META_VERSION, MODERN};
use stdio::{ClientLink, Line};
use upstream::Upstream;
use wire::{Incoming, Outcome};

/// The longest an `initialize` waits for the server's description (clients give their
/// handshake 10 to 60 seconds).
const HANDSHAKE_WAIT: Duration = Duration::from_secs(8);

/// Why the bridge stopped other than by its input closing.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error("reading the client's messages on stdin: {0}")]
    Input(#[from] std::io::Error),
}

/// Serves the client on stdin and stdout until stdin closes.
pub async fn run(args: BridgeArgs) -> Result<(), BridgeError> {
    serve(args, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves the client on `input` and `output` until `input` closes.
pub async fn serve<R, W>(args: BridgeArgs, input: R, output: W) -> Result<(), BridgeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (client, writer) = ClientLink::new(output);
    let bridge = Arc::new(Bridge {
        upstream: connect_upstream(&args),
        client,
        open_with: args.open_with.clone(),
        open_links: args.open_links,
        no_browser: args.no_browser,
        wait: args.wait,
        handshake: Mutex::new(None),
        opened: Mutex::new(HashMap::new()),
        in_flight: Mutex::new(HashMap::new()),
    });
    tracing::info!(server = %args.url, "grantry bridge: serving MCP on stdio");
    // Not awaited: a server that first wants a sign-in must not keep the client's
    // `initialize` unread meanwhile.
    tokio::spawn({
        let bridge = Arc::clone(&bridge);
        async move { bridge.check_server().await }
    });
    let mut input = BufReader::new(input);
    while let Some(line) = stdio::read_line(&mut input).await? {
        bridge.take_line(line);
    }
    tracing::info!("grantry bridge: the client closed stdin; stopping");
    bridge.stop();
    drop(bridge);
    // Whatever was already answered still reaches the client.
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    Ok(())
}

fn connect_upstream(args: &BridgeArgs) -> Upstream {
    let mut upstream = Upstream::new(args.url.clone(), &args.headers);
    if args
        .headers
        .iter()
        .any(|h| h.name == http::header::AUTHORIZATION)
    {
        return upstream;
    }
    match args.token_cache.clone().or_else(auth::default_dir) {
        Some(dir) => upstream.authorize_with(&dir, client_choice(args), args.open_with.clone()),
        None => tracing::warn!(
            "no per-user config directory for the token cache: MCP authorization is off \
             (set --token-cache)"
        ),
    }
    upstream
}

fn client_choice(args: &BridgeArgs) -> auth::Choice {
    let secret = args.client_id.as_ref().and_then(|_| args.client_secret());
    if let Some(worry) = secret.as_ref().and_then(|s| s.file_warning()) {
        tracing::warn!("{worry}: whoever can read it can act as this client; chmod 600 it");
    }
    auth::Choice {
        client_id: args.client_id.clone(),
        secret,
        metadata_url: args.client_metadata_url.clone(),
    }
}

pub(crate) struct Bridge {
    upstream: Upstream,
    client: ClientLink,
    open_with: Option<String>,
    open_links: OpenLinks,
    /// `--no-browser`: nobody is here to sign in or answer.
    no_browser: bool,
    wait: Duration,
    /// A handshake-era client's profile, from its `initialize`.
    handshake: Mutex<Option<ClientProfile>>,
    /// Links opened lately, so that asking again does not open another tab each time.
    opened: Mutex<HashMap<String, tokio::time::Instant>>,
    /// The client's requests being answered, by id, for `notifications/cancelled`.
    in_flight: Mutex<HashMap<String, AbortHandle>>,
}

impl Bridge {
    /// Says at start whether the server answers, without stopping if it does not.
    async fn check_server(&self) {
        let profile = ClientProfile::unknown();
        match self
            .send(&profile, "server/discover", json!({}), None)
            .await
        {
            Ok(Ok(_)) => tracing::info!("the server answers server/discover"),
            Ok(Err(error)) => tracing::warn!(%error, "the server refused server/discover"),
            Err(e) => tracing::error!(
                "grantry bridge: {e} (the bridge keeps running and tries again with each request)"
            ),
        }
    }

    /// One line of input: a message, or an error answered without an id (the bridge goes on).
    fn take_line(self: &Arc<Self>, line: Line) {
        let error = match line {
            Line::Text(text) if text.trim().is_empty() => return,
            Line::Text(text) => return self.take(&text),
            Line::NotUtf8 => wire::error(-32700, "parse error: the line is not UTF-8"),
            Line::TooLong => wire::error(
                -32600,
                format!(
                    "invalid request: the line is longer than {} MiB",
                    stdio::MAX_LINE_BYTES >> 20
                ),
            ),
        };
        self.client.send(&wire::answer(&Value::Null, Err(error)));
    }

    fn take(self: &Arc<Self>, line: &str) {
        match wire::parse(line) {
            Err(e) => {
                let error = wire::error(e.code(), e.to_string());
                self.client.send(&wire::answer(&Value::Null, Err(error)));
            }
            Ok(Incoming::Response { id, outcome }) => self.client.deliver(&id, outcome),
            Ok(Incoming::Notification { method, params }) => self.on_notification(&method, &params),
            Ok(Incoming::Request { id, method, params }) => self.start(id, method, params),
        }
    }

    fn on_notification(&self, method: &str, params: &Value) {
        if method == "notifications/cancelled" {
            let key = params["requestId"].to_string();
            if let Some(task) = self.in_flight().remove(&key) {
                task.abort();
            }
        }
        // notifications/initialized and the rest need nothing from the bridge.
    }

    /// Answers one request in its own task, so a held sign-in never blocks the others.
    fn start(self: &Arc<Self>, id: Value, method: String, params: Value) {
        let key = id.to_string();
        let bridge = Arc::clone(self);
        let mut in_flight = self.in_flight();
        if in_flight.contains_key(&key) {
            let error = wire::error(-32600, "a request with this id is still being answered");
            self.client.send(&wire::answer(&id, Err(error)));
            return;
        }
        let task = tokio::spawn(async move {
            let outcome = bridge.answer(&method, params).await;
            bridge.in_flight().remove(&id.to_string());
            bridge.client.send(&wire::answer(&id, outcome));
        });
        in_flight.insert(key, task.abort_handle());
    }

    async fn answer(&self, method: &str, params: Value) -> Outcome {
        match method {
            "initialize" => Ok(self.initialize(&params).await),
            "ping" => Ok(json!({})),
            "tools/call" => calls::call(self, params).await,
            _ => self.forward(method, params).await,
        }
    }

    /// The handshake: the client's era and capabilities are kept; the server's are passed on.
    async fn initialize(&self, params: &Value) -> Value {
        let (profile, version) = ClientProfile::from_initialize(params);
        *self
            .handshake
            .lock()
            .expect("handshake lock is never poisoned") = Some(profile.clone());
        // Within the time a client gives its handshake; a server still waiting for a sign-in
        // is described by the defaults meanwhile.
        let until = tokio::time::Instant::now() + self.wait.min(HANDSHAKE_WAIT);
        let discover = self.send(&profile, "server/discover", json!({}), Some(until));
        let discovered = match discover.await {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => {
                tracing::warn!(%error, "the server refused server/discover");
                Value::Null
            }
            Err(e) => {
                tracing::error!("grantry bridge: {e}");
                Value::Null
            }
        };
        handshake_answer(version, &discovered)
    }

    /// Passes a request to the server and its answer back.
    async fn forward(&self, method: &str, params: Value) -> Outcome {
        let profile = self.profile_for(&params);
        match self.send(&profile, method, params, None).await {
            Ok(Ok(result)) => Ok(for_client(&profile, result)),
            Ok(Err(error)) => Err(error),
            Err(e) => Err(wire::error(-32603, format!("grantry bridge: {e}"))),
        }
    }

    async fn send(
        &self,
        profile: &ClientProfile,
        method: &str,
        params: Value,
        until: Option<tokio::time::Instant>,
    ) -> Result<upstream::Reply, upstream::UpstreamError> {
        let params = upstream_params(profile, params);
        self.upstream
            .request(method, params, until, &|note| self.client.send(&note))
            .await
    }

    /// Who sent `params`: a 2026-07-28 request says so in its `_meta`; otherwise the client
    /// of the handshake.
    fn profile_for(&self, params: &Value) -> ClientProfile {
        if profile::is_modern(params) {
            return ClientProfile::from_meta(&params["_meta"]);
        }
        self.handshake
            .lock()
            .expect("handshake lock is never poisoned")
            .clone()
            .unwrap_or_else(ClientProfile::unknown)
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, AbortHandle>> {
        self.in_flight
            .lock()
            .expect("in-flight lock is never poisoned")
    }

    fn stop(&self) {
        self.client.close();
        for (_, task) in self.in_flight().drain() {
            task.abort();
        }
    }
}

/// `params` as the server gets them: the client's `_meta` (progress token, trace context)
/// with this revision, the bridge's capabilities for this client and the client's name.
fn upstream_params(profile: &ClientProfile, mut params: Value) -> Value {
    if !params.is_object() {
        params = json!({});
    }
    let mut meta = match params["_meta"].take() {
        Value::Object(meta) => meta,
        _ => Map::new(),
    };
    meta.insert(META_VERSION.into(), MODERN.into());
    meta.insert(META_CAPABILITIES.into(), profile.upstream_capabilities());
    let info = match &profile.info {
        Value::Object(_) => profile.info.clone(),
        _ => json!({"name": "grantry-bridge", "version": env!("CARGO_PKG_VERSION")}),
    };
    meta.insert(META_CLIENT_INFO.into(), info);
    params["_meta"] = Value::Object(meta);
    params
}

/// A result as the client's era has it: the handshake era knows no `resultType`.
fn for_client(profile: &ClientProfile, mut result: Value) -> Value {
    if profile.era == Era::Handshake
        && let Some(fields) = result.as_object_mut()
    {
        fields.remove("resultType");
    }
    result
}

/// The `initialize` answer from the server's `server/discover` (`Null` when it gave none).
fn handshake_answer(version: &str, discovered: &Value) -> Value {
    // Only what a handshake-era client can use through the bridge: list-changed and
    // subscriptions are not relayed.
    let mut capabilities = Map::new();
    for kind in ["tools", "prompts", "resources", "completions", "logging"] {
        if discovered["capabilities"].get(kind).is_some() {
            capabilities.insert(kind.into(), json!({}));
        }
    }
    if discovered.is_null() {
        capabilities.insert("tools".into(), json!({}));
    }
    let server_info = [
        &discovered["_meta"]["io.modelcontextprotocol/serverInfo"],
        &discovered["serverInfo"],
    ]
    .into_iter()
    .find(|info| info.is_object())
    .cloned()
    .unwrap_or_else(|| json!({"name": "grantry-bridge", "version": env!("CARGO_PKG_VERSION")}));
    let mut answer = json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": server_info,
    });
    if let Some(instructions) = discovered["instructions"].as_str() {
        answer["instructions"] = instructions.into();
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use testing::StdioClient;
    use url::Url;

    #[tokio::test]
    async fn a_line_that_is_not_utf8_is_answered_and_the_bridge_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        // Nothing listens on port 9: the server is never reached.
        let url = Url::parse("http://127.0.0.1:9/mcp").unwrap();
        let mut client = StdioClient::start(testing::args(url, dir.path()));
        client.write(b"{\"id\": \"\xff\"}\n").await;
        client
            .send(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
            .await;
        let refused = client.next().await;
        assert_eq!(refused["error"]["code"], -32700);
        assert_eq!(refused["id"], Value::Null);
        assert_eq!(
            client.next().await,
            json!({"jsonrpc": "2.0", "id": 7, "result": {}})
        );
        client.close().await;
    }

    #[tokio::test]
    async fn an_http_error_that_is_not_json_rpc_is_answered_with_its_cause() {
        let refuse = || async {
            let challenge = r#"Bearer error="insufficient_scope", scope="invoices:write""#;
            let body = axum::Json(json!({"error": "insufficient_scope"}));
            let headers = [("www-authenticate", challenge)];
            (http::StatusCode::FORBIDDEN, headers, body)
        };
        let router = axum::Router::new().route("/mcp", axum::routing::post(refuse));
        let base = testing::serve_router(router).await;
        let dir = tempfile::tempdir().unwrap();
        let mut args = testing::args(Url::parse(&format!("{base}/mcp")).unwrap(), dir.path());
        args.headers.push(testing::static_token());
        let mut client = StdioClient::start(args);
        let cause = "the server answered HTTP 403 Forbidden without a JSON-RPC answer \
                     (insufficient_scope)";
        client
            .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .await;
        let listed = client.next().await;
        assert_eq!(listed["id"], 1);
        assert_eq!(listed["error"]["code"], -32603);
        assert_eq!(
            listed["error"]["message"],
            format!("grantry bridge: {cause}")
        );
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_invoices", "arguments": {}}});
        client.send(&call).await;
        let called = client.next().await;
        assert_eq!(called["result"]["isError"], true);
        let text = called["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, format!("grantry bridge: {cause}"));
        client.close().await;
    }

    #[tokio::test]
    async fn under_no_browser_a_sign_in_reaches_no_one_and_its_link_is_not_passed_on() {
        const LINK: &str = "https://connector.example/connect/sealed-ticket";
        let answer = |axum::Json(request): axum::Json<Value>| async move {
            let result = match request["method"].as_str() {
                Some("tools/call") => json!({
                    "resultType": "input_required",
                    "inputRequests": {"connect:demo": {"method": "elicitation/create",
                        "params": {"mode": "url", "url": LINK, "message": "Connect Demo."}}},
                    "requestState": "sealed-state",
                }),
                Some("tools/list") => json!({"tools": []}),
                _ => json!({}),
            };
            axum::Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        };
        let router = axum::Router::new().route("/mcp", axum::routing::post(answer));
        let base = testing::serve_router(router).await;
        let dir = tempfile::tempdir().unwrap();
        let opened = dir.path().join("opened");
        let opener = dir.path().join("open");
        std::fs::write(&opener, format!("#!/bin/sh\ntouch {}\n", opened.display())).unwrap();
        let executable = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode;
        std::fs::set_permissions(&opener, executable(0o700)).unwrap();
        let mut args = testing::args(Url::parse(&format!("{base}/mcp")).unwrap(), dir.path());
        args.headers.push(testing::static_token());
        args.open_with = Some(opener.display().to_string());
        args.no_browser = true;
        let mut client = StdioClient::start(args);
        // A client that says it shows links: under --no-browser it is not asked to either.
        client
            .send(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {"url": {}, "form": {}}},
                "clientInfo": {"name": "scheduled-agent", "version": "1"}}}),
            )
            .await;
        assert_eq!(client.next().await["id"], 1);
        client
            .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "list_invoices", "arguments": {}}}))
            .await;
        let called = client.next().await;
        assert_eq!(
            called["id"], 2,
            "the call's answer, not a question: {called}"
        );
        assert_eq!(called["result"]["isError"], true);
        let text = called["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("no person is here"), "{text}");
        assert!(
            !called.to_string().contains(LINK),
            "the link stays with the bridge"
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!opened.exists(), "no browser opened");
        client.close().await;
    }

    #[test]
    fn the_server_gets_this_revision_and_the_bridges_capabilities_with_the_clients_meta() {
        let (profile, _) = ClientProfile::from_initialize(&json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "cursor-vscode", "version": "1"},
        }));
        let sent = upstream_params(
            &profile,
            json!({"name": "list_invoices", "_meta": {"progressToken": 7}}),
        );
        assert_eq!(sent["_meta"][META_VERSION], MODERN);
        assert_eq!(
            sent["_meta"][META_CAPABILITIES],
            json!({"elicitation": {"url": {}, "form": {}}})
        );
        assert_eq!(sent["_meta"][META_CLIENT_INFO]["name"], "cursor-vscode");
        assert_eq!(sent["_meta"]["progressToken"], 7);
        assert_eq!(sent["name"], "list_invoices");
    }

    #[test]
    fn the_handshake_answer_carries_the_servers_name_and_plain_capabilities() {
        let discovered = json!({
            "resultType": "complete",
            "capabilities": {"tools": {"listChanged": true}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "grantry", "version": "0.1.0"}},
            "instructions": "Billing tools.",
        });
        let answer = handshake_answer("2025-06-18", &discovered);
        assert_eq!(answer["protocolVersion"], "2025-06-18");
        assert_eq!(answer["capabilities"], json!({"tools": {}}));
        assert_eq!(answer["serverInfo"]["name"], "grantry");
        assert_eq!(answer["instructions"], "Billing tools.");
        let offline = handshake_answer("2025-11-25", &Value::Null);
        assert_eq!(offline["capabilities"], json!({"tools": {}}));
        assert_eq!(offline["serverInfo"]["name"], "grantry-bridge");
    }
}
