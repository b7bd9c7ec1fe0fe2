//! Connections that stay alive and say when they break, end to end: the real binary, the
//! provider fakes (support::fake_providers), and a real webhook receiver that verifies every
//! delivery with the official Standard Webhooks library (support::webhooks).
//!
//! - a revoked grant: the next call asks to reconnect and says why, `list_connections` shows
//!   `needs_reauth`, `connection.needs_reauth` arrives once, reconnecting keeps the id;
//! - deliveries: a 500 then a 200, an endpoint down past the retries (parked, then
//!   `grantry events retry`), a signature made with the wrong secret (refused by the
//!   verifier), a replica killed between the commit and the delivery;
//! - keep-alive: three replicas, refresh tokens that die unused after 10 s, a minute without
//!   a call: every window gets its refresh, none twice, no grant dies.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use crate::adapters::connect;
use crate::support::fake_providers::Fake;
use crate::support::mcp::url_and_form;
use crate::support::webhooks::Receiver;
use crate::support::{Mcp, Server, servers};

/// The fakes' catalog, with `extra` lines added to `provider`'s entry.
fn catalog_with(fake: &Fake, provider: &str, extra: &str) -> String {
    fake.catalog(provider).replacen(
        &format!("[providers.{provider}]\n"),
        &format!("[providers.{provider}]\n{extra}\n"),
        1,
    )
}

/// Everything a lifecycle test runs against: the fakes, a receiver, and grantry's flags.
struct Setup {
    fake: Fake,
    receiver: Receiver,
    args: Vec<String>,
    _dir: tempfile::TempDir,
}

async fn setup(store: &[String], retries: &str, catalog_extra: &str) -> Setup {
    setup_for(store, &["hooks"], retries, catalog_extra).await
}

async fn setup_for(
    store: &[String],
    endpoints: &[&str],
    retries: &str,
    catalog_extra: &str,
) -> Setup {
    let fake = Fake::start().await;
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, catalog_with(&fake, "xero", catalog_extra)).unwrap();
    let mut args = store.to_vec();
    args.extend(["--providers".into(), catalog.to_str().unwrap().into()]);
    args.extend(["--keys".into(), grantry::seal::generate_key()]);
    args.extend(receiver.flags(endpoints, retries));
    Setup {
        fake,
        receiver,
        args,
        _dir: dir,
    }
}

async fn call(server: &Server, tool: &str) -> Value {
    Mcp::new(server.mcp_url())
        .call_tool(tool, json!({}), url_and_form())
        .await
        .result()
        .clone()
}

async fn connections(server: &Server) -> Vec<Value> {
    call(server, "list_connections").await["structuredContent"]["connections"]
        .as_array()
        .unwrap()
        .clone()
}

async fn a_revoked_connection_asks_to_reconnect_and_says_so(store: &[String]) {
    let s = setup(store, "1,1,1", "").await;
    let server = Server::start(&servers::as_strs(&s.args)).await;
    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    let before = connections(&server).await;
    assert_eq!(before[0]["state"], "active", "{before:?}");

    s.fake.revoke_everything();
    for _ in 0..2 {
        let asked = call(&server, "list_invoices").await;
        assert_eq!(asked["resultType"], "input_required", "{asked}");
        let message = asked["inputRequests"]["connect_xero"]["params"]["message"]
            .as_str()
            .unwrap();
        assert!(message.contains("Reconnect your Xero account"), "{message}");
        assert!(message.contains("no longer accepts"), "{message}");
    }
    let broken = connections(&server).await;
    assert_eq!(broken.len(), 1, "kept, not deleted: {broken:?}");
    assert_eq!(broken[0]["state"], "needs_reauth");
    assert_eq!(broken[0]["reason"], "invalid_grant");
    assert_eq!(broken[0]["connection_id"], before[0]["connection_id"]);

    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    let after = connections(&server).await;
    assert_eq!(after[0]["state"], "active");
    assert_eq!(after[0]["connection_id"], before[0]["connection_id"]);

    let events = s.receiver.wait_for(3, Duration::from_secs(20)).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "connection.created",
            "connection.needs_reauth",
            "connection.reconnected"
        ],
        "once each, in order"
    );
    for event in &events {
        assert_eq!(event["connection_id"], before[0]["connection_id"]);
        assert_eq!(event["data"]["provider"], "xero");
        assert_eq!(event["data"]["principal"]["sub"], "local-user");
    }
    assert_eq!(events[1]["data"]["reason"], "invalid_grant");
    assert_eq!(events[1]["data"]["state"], "needs_reauth");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let state = s.receiver.state().await;
    assert_eq!(state["received"].as_array().unwrap().len(), 3, "{state}");
    assert_eq!(state["forged"], 0);
    let written = server
        .counter(
            "grantry_connection_events_total",
            &[("type", "connection.needs_reauth")],
        )
        .await;
    assert_eq!(written, 1.0);
}

async fn an_endpoint_failing_once_gets_the_event_next_time(store: &[String]) {
    let s = setup(store, "1,1,1", "").await;
    s.receiver.answer_first(&[500]).await;
    let server = Server::start(&servers::as_strs(&s.args)).await;
    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    let events = s.receiver.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(events[0]["type"], "connection.created");
    let state = s.receiver.state().await;
    assert_eq!(state["attempts"], 2, "a 500, then the delivery: {state}");
    let failed = [("endpoint", "hooks"), ("outcome", "failed")];
    assert_eq!(
        server
            .counter("grantry_webhook_deliveries_total", &failed)
            .await,
        1.0
    );
}

/// `grantry events …` against `server`'s store.
fn events_command(server: &Server, args: &[&str]) -> String {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_grantry"));
    command
        .arg("events")
        .args(args)
        .arg("--data-dir")
        .arg(server.data_dir.path())
        .args(server_store(server));
    let output = crate::support::server::exit_of(&mut command);
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The `--store`/`--store-prefix` flags `server` was started with.
fn server_store(server: &Server) -> Vec<String> {
    let args = server.args();
    let mut flags = Vec::new();
    for name in ["--store", "--store-prefix"] {
        if let Some(at) = args.iter().position(|a| a == name) {
            flags.extend([name.to_owned(), args[at + 1].clone()]);
        }
    }
    flags
}

async fn an_endpoint_down_past_the_retries_is_parked_then_retried(store: &[String]) {
    let s = setup(store, "1,1", "").await;
    s.receiver.set_down(true).await;
    let server = Server::start(&servers::as_strs(&s.args)).await;
    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    let parked = [("endpoint", "hooks"), ("outcome", "parked")];
    server
        .wait_for_counter("grantry_webhook_deliveries_total", &parked, 1.0)
        .await;
    let listed = events_command(&server, &["list", "--status", "parked"]);
    assert!(listed.contains("connection.created"), "{listed}");
    assert!(
        listed.contains("connection closed before message completed"),
        "why it failed: {listed}"
    );
    s.receiver.set_down(false).await;
    let retried = events_command(&server, &["retry"]);
    assert!(retried.starts_with("1 parked"), "{retried}");
    let events = s.receiver.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(events[0]["type"], "connection.created");
    assert!(events_command(&server, &["list", "--status", "parked"]).is_empty());
}

async fn a_wrong_secret_fails_verification(store: &[String]) {
    // A second endpoint to the same receiver, signing with a secret it does not know.
    let s = setup_for(store, &["hooks", "forger"], "1,1,1,1", "").await;
    let server = Server::start(&servers::as_strs(&s.args)).await;
    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    let events = s.receiver.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(events[0]["type"], "connection.created");
    let parked = [("endpoint", "forger"), ("outcome", "parked")];
    server
        .wait_for_counter("grantry_webhook_deliveries_total", &parked, 1.0)
        .await;
    let state = s.receiver.state().await;
    assert_eq!(
        state["forged"], 3,
        "refused three times, then parked: {state}"
    );
    assert_eq!(state["received"].as_array().unwrap().len(), 1, "{state}");
    let listed = events_command(&server, &["list", "--status", "parked"]);
    assert!(listed.contains("forger"), "{listed}");
}

async fn an_event_outlives_the_replica_that_wrote_it(store: &[String]) {
    let s = setup(store, "1,1,1,1,1,1,1,1,1,1", "").await;
    s.receiver.set_down(true).await;
    let mut first = Server::start(&servers::as_strs(&s.args)).await;
    connect(&first, &Mcp::new(first.mcp_url()), "xero").await;
    first.kill();
    s.receiver.set_down(false).await;
    let _second = Server::start_beside(&first, &servers::as_strs(&s.args)).await;
    // If the first was killed in the middle of an attempt, its claim lapses first (45 s).
    let events = s.receiver.wait_for(1, Duration::from_secs(60)).await;
    assert_eq!(events[0]["type"], "connection.created");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let state = s.receiver.state().await;
    assert_eq!(state["received"].as_array().unwrap().len(), 1, "{state}");
}

async fn a_failing_refresh_is_reported_and_so_is_its_recovery(store: &[String]) {
    let s = setup(store, "1", "").await;
    // Tokens that are always inside the refresh margin: every call refreshes first.
    s.fake.set(|f| {
        f.first_token_ttl = 30;
        f.refreshed_token_ttl = 30;
    });
    let server = Server::start(&servers::as_strs(&s.args)).await;
    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    s.fake.set(|f| f.refresh_outage = Some(503));
    for _ in 0..2 {
        let failed = call(&server, "list_invoices").await;
        assert_eq!(failed["isError"], true, "{failed}");
        let text = failed["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("try again"), "{text}");
    }
    let failing = connections(&server).await;
    assert_eq!(failing[0]["state"], "refresh_failing");
    assert!(
        failing[0]["reason"].as_str().unwrap().contains("503"),
        "{failing:?}"
    );
    s.fake.set(|f| f.refresh_outage = None);
    let listed = call(&server, "list_invoices").await;
    assert_eq!(listed["resultType"], "complete", "{listed}");
    assert_eq!(connections(&server).await[0]["state"], "active");
    let events = s.receiver.wait_for(3, Duration::from_secs(20)).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "connection.created",
            "connection.refresh_failed",
            "connection.recovered"
        ],
        "the failure once (two failed calls), then the recovery"
    );
    assert_eq!(events[1]["data"]["state"], "refresh_failing");
    assert_eq!(events[2]["data"]["state"], "active");
}

async fn a_hard_expiry_is_announced_once(store: &[String]) {
    // Refresh tokens that die 100 s after the sign-in, announced a day (the least) before.
    let s = setup(store, "1", "refresh_max_secs = 100").await;
    let mut args = s.args.clone();
    args.extend(["--keepalive-interval", "1", "--expiry-warning", "1"].map(String::from));
    let server = Server::start(&servers::as_strs(&args)).await;
    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    let events = s.receiver.wait_for(2, Duration::from_secs(20)).await;
    assert_eq!(events[1]["type"], "connection.expiring");
    assert!(
        events[1]["data"]["hard_expires_at"].is_string(),
        "{}",
        events[1]
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let state = s.receiver.state().await;
    assert_eq!(
        state["received"].as_array().unwrap().len(),
        2,
        "once: {state}"
    );
    let listed = connections(&server).await;
    assert_eq!(
        listed[0]["expires_at"],
        events[1]["data"]["hard_expires_at"]
    );
    assert!(
        listed[0]["last_used"].is_string(),
        "the connect's call used it: {listed:?}"
    );
    assert!(listed[0]["last_refreshed"].is_string(), "{listed:?}");
}

async fn a_stalled_endpoint_blocks_nothing(store: &[String]) {
    let s = setup(store, "1", "").await;
    s.receiver.set_hold(true).await;
    let server = Server::start(&servers::as_strs(&s.args)).await;
    let started = std::time::Instant::now();
    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    s.receiver.wait_until_holding().await;
    for _ in 0..5 {
        let listed = call(&server, "list_invoices").await;
        assert_eq!(listed["resultType"], "complete", "{listed}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the sign-in and the calls never waited for the endpoint"
    );
    s.receiver.set_hold(false).await;
    let events = s.receiver.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(events[0]["type"], "connection.created");
}

async fn a_hanging_endpoint_delays_only_its_own_deliveries(store: &[String]) {
    let s = setup(store, "1", "").await;
    // A second endpoint, `slow`, that takes every delivery and never answers.
    let slow = Receiver::start();
    slow.set_hold(true).await;
    let mut args = s.args.clone();
    let at = args.iter().position(|a| a == "--webhook-url").unwrap() + 1;
    args[at] = format!("{},slow={}", args[at], slow.url);
    let server = Server::start(&servers::as_strs(&args)).await;
    let mcp = Mcp::new(server.mcp_url());
    connect(&server, &mcp, "xero").await;
    slow.wait_until_holding().await;
    s.receiver.wait_for(1, Duration::from_secs(10)).await;
    // While `slow` still holds the first event, the second reaches `hooks` at once.
    connect(&server, &mcp, "stripe").await;
    let started = std::time::Instant::now();
    let events = s.receiver.wait_for(2, Duration::from_secs(10)).await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the second event waited {:?} behind the hanging endpoint",
        started.elapsed()
    );
    assert!(
        events.iter().all(|e| e["type"] == "connection.created"),
        "{events:?}"
    );
    assert!(
        slow.state().await["held"].as_u64() > Some(0),
        "slow still hangs"
    );
}

/// Waits until the clock's whole second changes.
async fn next_second() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    tokio::time::sleep(Duration::from_nanos(
        1_000_000_000 - u64::from(now.subsec_nanos()),
    ))
    .await;
}

async fn past_its_cap_an_endpoint_loses_its_oldest_parked_delivery(store: &[String]) {
    let s = setup(store, "1", "").await;
    s.receiver.set_down(true).await;
    let mut args = s.args.clone();
    args.extend(["--webhook-max-undelivered".into(), "2".into()]);
    let server = Server::start(&servers::as_strs(&args)).await;
    let mcp = Mcp::new(server.mcp_url());
    for provider in ["xero", "stripe", "sage"] {
        // Events are timed in whole seconds (and Redis orders by that time alone): one a
        // second, so that which is oldest is clear.
        next_second().await;
        connect(&server, &mcp, provider).await;
    }
    let parked = [("endpoint", "hooks"), ("outcome", "parked")];
    server
        .wait_for_counter("grantry_webhook_deliveries_total", &parked, 3.0)
        .await;
    // Event ids, newest first.
    let ids = |listed: String| -> Vec<String> {
        listed
            .lines()
            .map(|l| l.split_whitespace().next().unwrap().to_owned())
            .collect()
    };
    let before = ids(events_command(&server, &["list", "--status", "parked"]));
    assert_eq!(before.len(), 3, "{before:?}");
    // The cap is kept at start and every few minutes: a restart keeps it now.
    let server = server.restart().await;
    let dropped = [("endpoint", "hooks")];
    server
        .wait_for_counter("grantry_webhook_deliveries_dropped_total", &dropped, 1.0)
        .await;
    assert!(server.log_shows("webhook deliveries DROPPED").await);
    let after = ids(events_command(&server, &["list", "--status", "parked"]));
    assert_eq!(after, before[..2], "the oldest went");
}

async fn an_endpoint_no_longer_configured_has_its_deliveries_parked(store: &[String]) {
    let s = setup(store, "60", "").await;
    s.receiver.set_down(true).await;
    let mut first = Server::start(&servers::as_strs(&s.args)).await;
    connect(&first, &Mcp::new(first.mcp_url()), "xero").await;
    first.kill();
    // The same store, now without `hooks`: what waited for it is parked, and says why.
    let at = s.args.iter().position(|a| a == "--webhook-url").unwrap();
    let mut args = s.args.clone();
    args.drain(at..at + 2);
    let second = Server::start_beside(&first, &servers::as_strs(&args)).await;
    let mut listed = String::new();
    for _ in 0..100 {
        listed = events_command(&second, &["list", "--status", "parked"]);
        if !listed.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(listed.contains("connection.created"), "{listed}");
    assert!(listed.contains("no longer configured"), "{listed}");
    assert!(
        second
            .log_shows("their endpoint is no longer configured")
            .await
    );
}

/// Refresh tokens that die unused after this long, at the fake and in the catalog.
const IDLE: u64 = 10;
/// How long the keep-alive test runs without a call: `GRANTRY_KEEPALIVE_SECONDS` (the soak
/// stage runs 40 s, four windows; the long form 600), else a minute.
fn span() -> u64 {
    std::env::var("GRANTRY_KEEPALIVE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60)
}

async fn the_keepalive_refreshes_each_window_once(store: &[String]) {
    let s = setup(
        store,
        "1",
        &format!("refresh_idle_secs = {IDLE}\nrefresh_grace_secs = 0"),
    )
    .await;
    let span = span();
    s.fake
        .set(|f| f.refresh_idle = Some(Duration::from_secs(IDLE)));
    let mut args = s.args.clone();
    args.extend(["--keepalive-interval".into(), "1".into()]);
    let flags = servers::as_strs(&args);
    let first = Server::start(&flags).await;
    let replicas = [
        Server::start_beside(&first, &flags).await,
        Server::start_beside(&first, &flags).await,
        first,
    ];
    connect(&replicas[0], &Mcp::new(replicas[0].mcp_url()), "xero").await;
    let connected = std::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(span)).await;

    let refreshes = s.fake.counters.refreshes.load(Ordering::SeqCst);
    // One refresh per 75-85 % of a window (a second late at most, the round interval).
    let (fewest, most) = (span * 100 / (IDLE * 85 + 100), span * 100 / (IDLE * 75) + 1);
    assert!(
        (fewest..=most).contains(&refreshes),
        "{refreshes} refreshes in {span} s of {IDLE} s windows"
    );
    assert_eq!(s.fake.counters.idle_deaths.load(Ordering::SeqCst), 0);
    assert_eq!(s.fake.counters.family_revocations.load(Ordering::SeqCst), 0);
    let times = s.fake.counters.refreshed_at.lock().unwrap().clone();
    let mut previous = connected;
    for at in times {
        assert!(
            at.duration_since(previous) < Duration::from_secs(IDLE),
            "a window passed without a refresh"
        );
        previous = at;
    }
    // A refresh the fake has answered may not be counted by its replica yet: the counts
    // must meet within a moment (each refresh by one replica), never pass each other.
    let labels = [("trigger", "keepalive"), ("outcome", "refreshed")];
    let mut counted = 0.0;
    for _ in 0..50 {
        counted = 0.0;
        for replica in &replicas {
            counted += replica.counter("grantry_refreshes_total", &labels).await;
        }
        if counted == s.fake.counters.refreshes.load(Ordering::SeqCst) as f64 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        counted,
        s.fake.counters.refreshes.load(Ordering::SeqCst) as f64,
        "each refresh by one replica"
    );
    let listed = call(&replicas[2], "list_invoices").await;
    assert_eq!(
        listed["resultType"], "complete",
        "still connected: {listed}"
    );
}

on_every_store!(a_revoked_connection_asks_to_reconnect_and_says_so);
on_every_store!(an_endpoint_failing_once_gets_the_event_next_time);
on_every_store!(an_endpoint_down_past_the_retries_is_parked_then_retried);
on_every_store!(a_wrong_secret_fails_verification);
on_every_store!(a_stalled_endpoint_blocks_nothing);
on_every_store!(a_hanging_endpoint_delays_only_its_own_deliveries);
on_every_store!(past_its_cap_an_endpoint_loses_its_oldest_parked_delivery);
on_shared_stores!(an_endpoint_no_longer_configured_has_its_deliveries_parked);
on_every_store!(a_failing_refresh_is_reported_and_so_is_its_recovery);
on_every_store!(a_hard_expiry_is_announced_once);
on_shared_stores!(an_event_outlives_the_replica_that_wrote_it);
on_shared_stores!(
    #[ignore = "a soak of a minute: scripts/test soak runs it"]
    the_keepalive_refreshes_each_window_once
);
