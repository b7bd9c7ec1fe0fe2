//! Outside the soaks, in every test run: grantry on a Sentinel setup of its own follows the
//! primary when it is killed. A person connected before goes on listing invoices, served by
//! the new primary, without a restart and without signing in again.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use super::topology::{Shape, Topology};
use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server};

#[tokio::test]
async fn a_killed_sentinel_primary_is_followed_without_a_restart() {
    let Some(topology) = Topology::start(Shape::Sentinel) else {
        return;
    };
    // Acknowledged by a replica too: the grant outlives its primary.
    let server = Server::start(&["--store", &topology.store, "--redis-min-replicas", "1"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, state, key) = mcp.first_round().await;
    Browser::new().sign_in(&link, true).await.assert_connected();
    let accept = json!({ &key: {"action": "accept"} });
    let first = mcp.retry("list_invoices", json!({}), accept, &state).await;
    assert_eq!(first.result()["isError"], false, "{}", first.raw);

    let topology = tokio::task::spawn_blocking(move || {
        topology.fail_primary();
        topology
    })
    .await
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let listed = loop {
        let answer = mcp
            .call_tool("list_invoices", json!({}), url_and_form())
            .await;
        let done = answer
            .body
            .get("result")
            .is_some_and(|r| r["isError"] == false);
        if done || Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let result = listed.result();
    assert_eq!(result["resultType"], "complete", "{}", listed.raw);
    assert_eq!(result["isError"], false, "{}", listed.raw);
    assert_eq!(
        result["structuredContent"]["invoices"],
        first.result()["structuredContent"]["invoices"],
        "the same account's invoices"
    );
    let ready = reqwest::get(format!("{}/readyz", server.base))
        .await
        .unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    drop(topology);
}
