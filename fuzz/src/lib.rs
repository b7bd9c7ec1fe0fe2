//! What the fuzz targets share: grantry's whole app on an embedded SQLite store in a
//! temporary directory, driven in-process, and a sealer like the one the app uses.

use std::net::SocketAddr;
use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response};
use grantry::config::{Config, ServeArgs};
use grantry::seal::{KeyRing, Sealer};
use tower::ServiceExt;

/// The address the app believes it listens on (its Host check wants it).
pub const HOST: &str = "127.0.0.1:8080";

pub struct Harness {
    runtime: tokio::runtime::Runtime,
    app: Router,
    _data_dir: tempfile::TempDir,
}

/// Built once per fuzzing process: every input runs against the same app and store.
pub fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let data_dir = tempfile::tempdir().expect("a temporary data directory");
        // Rate limits off: with the defaults (600 MCP requests a minute per caller, 60 browser
        // requests per address) nearly every input would be refused at the door.
        const UNLIMITED: &str = "1000000000";
        let flags = ServeArgs::from_flags([
            "--data-dir",
            data_dir.path().to_str().expect("a UTF-8 path"),
            "--rate-mcp-principal",
            UNLIMITED,
            "--rate-mcp-ip",
            UNLIMITED,
            "--rate-browser-ip",
            UNLIMITED,
            "--rate-demo-ip",
            UNLIMITED,
            "--max-pending-flows",
            UNLIMITED,
        ])
        .expect("the flags parse");
        let config = Config::resolve(flags).expect("the default configuration resolves");
        let state = runtime
            .block_on(grantry::startup::build(config))
            .expect("the app starts on SQLite");
        Harness {
            runtime,
            app: grantry::app(state, None),
            _data_dir: data_dir,
        }
    })
}

impl Harness {
    /// Sends one request through the app and reads the whole answer.
    pub fn send(&self, request: Request<Body>) -> (Response<()>, Vec<u8>) {
        self.send_to(&self.app, request)
    }

    fn send_to(&self, app: &Router, mut request: Request<Body>) -> (Response<()>, Vec<u8>) {
        let peer: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        request.extensions_mut().insert(ConnectInfo(peer));
        self.runtime.block_on(async {
            let response = app.clone().oneshot(request).await.expect("infallible");
            let (parts, body) = response.into_parts();
            let bytes = axum::body::to_bytes(body, usize::MAX)
                .await
                .expect("the answer's body reads to the end");
            (Response::from_parts(parts, ()), bytes.to_vec())
        })
    }
}

/// A sealer with a fixed key and the default audience.
pub fn sealer() -> &'static Sealer {
    static SEALER: OnceLock<Sealer> = OnceLock::new();
    SEALER.get_or_init(|| {
        let ring = KeyRing::from_keys(&[[7; 32]]).expect("one key");
        Sealer::new(ring, format!("http://{HOST}/mcp"))
    })
}
