//! Three replicas behind one public URL, sharing a store and a key ring: any replica serves
//! any step, and a replica killed mid-flow loses nothing.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::balancer::Balancer;
use crate::support::{Browser, Mcp, Server, servers};

/// Starts three replicas on `store_args`, all with the balancer's URL as public URL.
pub(crate) async fn replicas(store_args: &[&str]) -> (Balancer, Vec<Server>) {
    let key = grantry::seal::generate_key();
    // The replicas need the balancer's URL, and the balancer their ports: it starts first,
    // and learns each replica's port once that replica listens.
    let balancer = Balancer::start(Vec::new()).await;
    let mut args = vec![
        "--keys",
        key.as_str(),
        "--public-url",
        balancer.base.as_str(),
        "--retry-hold",
        "10",
    ];
    args.extend_from_slice(store_args);
    let mut servers = Vec::new();
    for _ in 0..3 {
        let server = Server::start(&args).await;
        balancer.add(server.base.trim_start_matches("http://"));
        servers.push(server);
    }
    (balancer, servers)
}

/// Moves a URL of the public address onto one replica.
pub(crate) fn on(server: &Server, balancer: &Balancer, url: &str) -> String {
    url.replacen(&balancer.base, &server.base, 1)
}

async fn any_replica_serves_any_step(store_args: &[&str]) {
    let (balancer, mut servers) = replicas(store_args).await;

    // A hands out the link, B serves the connect page, C takes the callback, A the retry.
    let a = Mcp::new(servers[0].mcp_url());
    let (link, state, key) = a.first_round().await;
    let browser = Browser::new();
    let authorize = browser
        .continue_at(&on(&servers[1], &balancer, &link))
        .await;
    let callback = browser.decide_at_provider(&authorize, true).await;
    let page = browser.get(&on(&servers[2], &balancer, &callback)).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let retry = a
        .retry(
            "list_invoices",
            json!({}),
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);

    // With A gone, the grant serves the call on B at once.
    servers[0].kill();
    let b = Mcp::new(servers[1].mcp_url());
    let answer = b
        .call_tool(
            "list_invoices",
            json!({"status": "paid"}),
            crate::support::mcp::url_and_form(),
        )
        .await;
    assert_eq!(
        answer.result()["resultType"],
        "complete",
        "the grant serves every replica"
    );
}

/// The replica that issued the link dies before the callback; the others finish the flow.
async fn a_replica_killed_mid_flow_loses_nothing(store_args: &[&str]) {
    let (balancer, mut servers) = replicas(store_args).await;
    let a = Mcp::new(servers[0].mcp_url());
    let (link, state, key) = a.first_round().await;
    let browser = Browser::new();
    let authorize = browser
        .continue_at(&on(&servers[1], &balancer, &link))
        .await;
    servers[0].kill();
    let callback = browser.decide_at_provider(&authorize, true).await;
    let page = browser.get(&on(&servers[2], &balancer, &callback)).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let retry = Mcp::new(servers[1].mcp_url())
        .retry(
            "list_invoices",
            json!({}),
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_any_replica_serves_any_step() {
    let Some((args, _database)) = servers::postgres_store().await else {
        return;
    };
    any_replica_serves_any_step(&servers::as_strs(&args)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_replica_killed_mid_flow_loses_nothing() {
    let Some((args, _database)) = servers::postgres_store().await else {
        return;
    };
    a_replica_killed_mid_flow_loses_nothing(&servers::as_strs(&args)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_any_replica_serves_any_step() {
    let Some((args, _keys)) = servers::redis_store().await else {
        return;
    };
    any_replica_serves_any_step(&servers::as_strs(&args)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_a_replica_killed_mid_flow_loses_nothing() {
    let Some((args, _keys)) = servers::redis_store().await else {
        return;
    };
    a_replica_killed_mid_flow_loses_nothing(&servers::as_strs(&args)).await;
}
