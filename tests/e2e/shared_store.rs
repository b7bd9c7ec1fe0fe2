//! The whole sign-in on the shared stores, PostgreSQL and Redis, and what grantry asks of a
//! Redis before it trusts it with grants.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::json;

use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server, servers};

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
    done.assert_connected();
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
    let Some((args, _database)) = servers::postgres_store().await else {
        return;
    };
    sign_in_survives_a_restart(&servers::as_strs(&args)).await;
}

#[tokio::test]
async fn sign_in_on_redis() {
    let Some((args, _keys)) = servers::redis_store().await else {
        return;
    };
    sign_in_survives_a_restart(&servers::as_strs(&args)).await;
}

/// A listen address for a grantry that must refuse to start (it never binds it).
fn listen() -> String {
    format!("127.0.0.1:{}", crate::support::server::free_port())
}

#[tokio::test]
async fn a_redis_that_could_lose_grants_is_refused_unless_allowed() {
    if !servers::redis_available().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = crate::support::server::exit_of(
        Command::new(env!("CARGO_BIN_EXE_grantry"))
            .args(["--listen", &listen(), "--data-dir"])
            .arg(dir.path())
            .args(["--store", &servers::redis_url()])
            .args(["--keys", &grantry::seal::generate_key()])
            .env_remove("GRANTRY_ALLOW_VOLATILE_STORE"),
    );
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
    let Some(redis) = crate::faults::redis::OwnRedis::start() else {
        return;
    };
    let server = Server::start(&["--store", &redis.url()]).await;
    assert!(!server.settled_log().await.contains("may lose grants"));
    let answer = Mcp::new(server.mcp_url()).first_round().await;
    assert!(answer.0.contains("/connect/"));
}

/// Two replicas behind one public URL: the retry is held on A while the browser's sign-in,
/// callback included, is served by B. A must wake on B's event, not on its slow poll.
async fn a_held_retry_wakes_on_another_replica(store_args: &[&str]) {
    let key = grantry::seal::generate_key();
    // No poll within the hold: only B's event can wake A's retry in time.
    let mut args = vec![
        "--keys",
        key.as_str(),
        "--retry-hold",
        "30",
        "--hold-poll-interval",
        "300",
    ];
    args.extend_from_slice(store_args);
    let a = Server::start(&args).await;
    let mut b_args = args.clone();
    b_args.extend_from_slice(&["--public-url", a.base.as_str()]);
    let b = Server::start(&b_args).await;
    let on_b = |url: &str| url.replacen(&a.base, &b.base, 1);

    let mcp = std::sync::Arc::new(Mcp::new(a.mcp_url()));
    let (link, state, input_key) = mcp.first_round().await;
    let held = {
        let mcp = mcp.clone();
        tokio::spawn(async move {
            let answer = mcp
                .retry(
                    "list_invoices",
                    json!({}),
                    json!({ input_key: {"action": "accept"} }),
                    &state,
                )
                .await;
            (answer, std::time::Instant::now())
        })
    };
    a.wait_until_holding(1).await;
    let browser = Browser::new();
    let authorize = browser.continue_at(&on_b(&link)).await;
    let callback = browser.decide_at_provider(&authorize, true).await;
    let page = browser.get(&on_b(&callback)).await;
    let landed = std::time::Instant::now();
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert!(
        b.log_shows("grant stored").await,
        "the callback was served by B:\n{}\nA:\n{}",
        b.log(),
        a.log()
    );

    let (answer, woke) = held.await.unwrap();
    assert_eq!(answer.result()["resultType"], "complete", "{}", answer.raw);
    let latency = woke.saturating_duration_since(landed);
    eprintln!("cross-replica wake-up: {latency:?}");
    assert!(
        latency < std::time::Duration::from_secs(1),
        "woke {latency:?} after the callback: by B's event, not a poll"
    );
}

#[tokio::test]
async fn a_held_retry_wakes_on_another_replica_with_postgres() {
    let Some((args, _database)) = servers::postgres_store().await else {
        return;
    };
    a_held_retry_wakes_on_another_replica(&servers::as_strs(&args)).await;
}

#[tokio::test]
async fn a_held_retry_wakes_on_another_replica_with_redis() {
    let Some((args, _keys)) = servers::redis_store().await else {
        return;
    };
    a_held_retry_wakes_on_another_replica(&servers::as_strs(&args)).await;
}

#[tokio::test]
async fn postgres_without_synchronous_commit_is_refused_unless_allowed() {
    let Some(database) = servers::fresh_postgres().await else {
        return;
    };
    let (url, name) = (&database.url, &database.name);
    {
        use sqlx::Connection;
        let mut admin = sqlx::PgConnection::connect(&servers::postgres_admin_url())
            .await
            .unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE {name} SET synchronous_commit = off"
        )))
        .execute(&mut admin)
        .await
        .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let out = crate::support::server::exit_of(
        Command::new(env!("CARGO_BIN_EXE_grantry"))
            .args(["--listen", &listen(), "--data-dir"])
            .arg(dir.path())
            .args(["--store", url])
            .args(["--keys", &grantry::seal::generate_key()]),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("synchronous_commit"), "{err}");
    let server = Server::start(&["--store", url, "--allow-volatile-store", "true"]).await;
    assert!(server.log_shows("synchronous_commit off").await);
    drop(server);
}
