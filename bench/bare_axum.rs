//! The machine's limit for the benchmark: a bare axum server that answers `POST /mcp` with a
//! fixed JSON body, read and discarded request body included. Same runtime, same HTTP stack
//! as grantry, none of its work.
//!
//! `cargo run --release --example bare_axum -- 127.0.0.1:9001`

// Benchmark scaffolding, not product: an unwrap that fails is the run's failure, and nothing
// here is anyone's API.
#![allow(clippy::unwrap_used, unreachable_pub)]

use axum::Router;
use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::routing::{get, post};

// The allocator grantry runs with, so that the ratios compare the work, not the allocators.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"fixed"}],"isError":false}}"#;

#[tokio::main]
async fn main() {
    let listen = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9001".to_owned());
    let app = Router::new()
        .route(
            "/mcp",
            post(|_body: Bytes| async { ([(CONTENT_TYPE, "application/json")], ANSWER) }),
        )
        .route("/healthz", get(|| async { "ok" }))
        // An OTLP/HTTP collector that takes every export at once (`bench/run --traces`).
        .route("/v1/traces", post(|_body: Bytes| async { "" }));
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .unwrap_or_else(|e| panic!("cannot listen on {listen}: {e}"));
    axum::serve(listener, app).await.expect("serve");
}
