//! The whole sign-in on the shared stores, PostgreSQL and Redis, and what grantry asks of a
//! Redis before it trusts it with grants.

#[path = "../common/servers.rs"]
mod servers;

use std::process::{Command, Stdio};

use reqwest::StatusCode;
use serde_json::json;

use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server};

/// Signs in, then checks that the grant outlives the process (killed and started again on
/// the same store and keys).
async fn sign_in_survives_a_restart(store_args: &[&str]) {
    let key = grantry::seal::generate_key();
    let mut args = vec!["--keys", key.as_str()];
    args.extend_from_slice(store_args);
    let server = Server::start(&args).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, state, input_key) = mcp.first_round().await;
    let done = Browser::new().sign_in(&link, true).await;
    assert_eq!(
        done.final_page.status,
        StatusCode::OK,
        "{}",
        done.final_page.body
    );
    let retry = mcp
        .retry(
            "list_invoices",
            json!({}),
            json!({ input_key: {"action": "accept"} }),
            &state,
        )
        .await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
    let again = server.restart().await;
    let answer = Mcp::new(again.mcp_url())
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    assert_eq!(
        answer.result()["resultType"],
        "complete",
        "the grant is in the store"
    );
}

#[tokio::test]
async fn sign_in_on_postgres() {
    let Some((url, name)) = servers::fresh_postgres().await else {
        return;
    };
    sign_in_survives_a_restart(&["--store", &url]).await;
    servers::drop_postgres(&name).await;
}

#[tokio::test]
async fn sign_in_on_redis() {
    if !servers::redis_available().await {
        return;
    }
    let prefix = format!("grantry-e2e-{}:", servers::random_suffix());
    let url = servers::redis_url();
    // The CI Redis keeps nothing on disk, so this run accepts a volatile store explicitly.
    sign_in_survives_a_restart(&[
        "--store",
        &url,
        "--store-prefix",
        &prefix,
        "--allow-volatile-store",
        "true",
    ])
    .await;
    servers::drop_redis_prefix(&prefix).await;
}

#[tokio::test]
async fn a_redis_that_could_lose_grants_is_refused_unless_allowed() {
    if !servers::redis_available().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grantry"))
        .args(["--listen", "127.0.0.1:18123", "--data-dir"])
        .arg(dir.path())
        .args(["--store", &servers::redis_url()])
        .env_remove("GRANTRY_ALLOW_VOLATILE_STORE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--store") && err.contains("appendonly"),
        "{err}"
    );
    assert!(err.contains("--allow-volatile-store"), "{err}");
}

#[tokio::test]
async fn a_durable_redis_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let spawned = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args(["--appendonly", "yes", "--appendfsync", "always"])
        .args(["--maxmemory-policy", "noeviction", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .spawn();
    let Ok(mut redis) = spawned else {
        servers::skip("redis-server", "not installed");
        return;
    };
    let url = format!("redis://127.0.0.1:{port}");
    let server = Server::start(&["--store", &url]).await;
    assert!(!server.log().contains("may lose grants"));
    let answer = Mcp::new(server.mcp_url()).first_round().await;
    assert!(answer.0.contains("/connect/"));
    drop(server);
    let _ = redis.kill();
    let _ = redis.wait();
}
