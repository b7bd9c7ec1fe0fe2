//! For the tests: a bridge served on in-memory pipes, spoken to as a stdio client would, and
//! small HTTP servers standing in for the remote MCP server.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;
use url::Url;

use super::{BridgeError, serve};
use crate::args::{BridgeArgs, StaticHeader};

/// Options for a bridge to `url`, its tokens under `token_cache`, nothing opened.
pub(super) fn args(url: Url, token_cache: &std::path::Path) -> BridgeArgs {
    BridgeArgs {
        url,
        open_with: Some("/bin/false".into()),
        open_links: crate::args::OpenLinks::Auto,
        no_browser: false,
        wait: Duration::from_secs(1),
        headers: Vec::new(),
        client_id: None,
        client_secret_file: None,
        client_metadata_url: None,
        token_cache: Some(token_cache.to_owned()),
    }
}

/// A static `Authorization` header: the bridge's own authorization is then off.
pub(super) fn static_token() -> StaticHeader {
    StaticHeader {
        name: http::header::AUTHORIZATION,
        value: http::HeaderValue::from_static("Bearer static"),
    }
}

/// Serves `router` on a loopback port; its base URL.
pub(super) async fn serve_router(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    base
}

/// The client's end of a bridge on pipes.
pub(super) struct StdioClient {
    to_bridge: Option<DuplexStream>,
    answers: Lines<BufReader<DuplexStream>>,
    serving: JoinHandle<Result<(), BridgeError>>,
}

impl StdioClient {
    pub(super) fn start(args: BridgeArgs) -> Self {
        grantry_base::net::install_tls_provider();
        let (to_bridge, input) = tokio::io::duplex(1 << 16);
        let (output, from_bridge) = tokio::io::duplex(1 << 16);
        Self {
            to_bridge: Some(to_bridge),
            answers: BufReader::new(from_bridge).lines(),
            serving: tokio::spawn(serve(args, input, output)),
        }
    }

    /// Writes `bytes` as they are (a line end included or not).
    pub(super) async fn write(&mut self, bytes: &[u8]) {
        let pipe = self.to_bridge.as_mut().expect("stdin is open");
        pipe.write_all(bytes).await.unwrap();
    }

    pub(super) async fn send(&mut self, message: &Value) {
        self.write(format!("{message}\n").as_bytes()).await;
    }

    /// The next line from the bridge, within 10 s.
    pub(super) async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.answers.next_line());
        let line = line.await.expect("an answer in time").unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// Closes stdin; the bridge must stop cleanly.
    pub(super) async fn close(mut self) {
        self.to_bridge = None;
        self.serving.await.unwrap().unwrap();
    }
}
