//! Token refresh across replicas, against a provider that rotates refresh tokens and revokes
//! the whole grant when a rotated one comes back (support::fake_providers): one refresh for
//! any number of concurrent calls on any number of replicas; `invalid_grant` asks the user to
//! sign in again; a refresh that times out after the provider rotated is not retried blindly.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use crate::adapters::connect;
use crate::support::fake_providers::Fake;
use crate::support::mcp::url_and_form;
use crate::support::{Mcp, Server, servers};

/// Two replicas on one store and key ring, `provider` connected on the first, its access
/// token about to expire (66 s: inside the 60 s refresh margin once the setup is done).
async fn two_replicas(
    store: &[String],
    provider: &str,
) -> (Server, Server, Fake, tempfile::TempDir) {
    let fake = Fake::start().await;
    fake.set(|s| s.first_token_ttl = 66);
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog(provider)).unwrap();
    let key = grantry::seal::generate_key();
    let mut args = servers::as_strs(store);
    args.extend(["--providers", catalog.to_str().unwrap(), "--keys", &key]);
    // A hundred connections opened at once, on a 2-core machine running the whole suite:
    // some heads took over the default 10 s to be read, and the servers closed those
    // connections by their header deadline (logged `reason="header"`). That deadline has
    // tests of its own (tests/e2e/hardening/connections.rs); here it only has to outlast the load.
    args.extend(["--header-read-timeout", "120"]);
    let a = Server::start(&args).await;
    let b = Server::start_beside(&a, &args).await;
    connect(&a, &Mcp::new(a.mcp_url()), provider).await;
    assert_eq!(
        fake.counters.refreshes.load(Ordering::SeqCst),
        0,
        "connected with a token still fresh"
    );
    // 66 s: fresh for 6 s (past the 60 s margin), so connecting never refreshes it.
    tokio::time::sleep(Duration::from_millis(6100)).await;
    (a, b, fake, dir)
}

async fn list(server: &Server) -> serde_json::Value {
    list_from(server, "xero").await
}

async fn list_from(server: &Server, provider: &str) -> serde_json::Value {
    Mcp::new(server.mcp_url())
        .call_tool(
            "list_invoices",
            json!({"provider": provider}),
            url_and_form(),
        )
        .await
        .result()
        .clone()
}

async fn one_refresh_for_a_hundred_concurrent_calls(store: &[String]) {
    let (a, b, fake, _dir) = two_replicas(store, "xero").await;
    fake.set(|s| s.refresh_delay = Duration::from_millis(300));
    let calls = (0..100).map(|i| {
        let server = if i % 2 == 0 { &a } else { &b };
        list(server)
    });
    let results = futures::future::join_all(calls).await;
    for result in &results {
        assert_eq!(result["resultType"], "complete", "{result}");
        assert_eq!(result["isError"], false, "{result}");
    }
    assert_eq!(
        fake.counters.refreshes.load(Ordering::SeqCst),
        1,
        "exactly one refresh"
    );
    assert_eq!(fake.counters.family_revocations.load(Ordering::SeqCst), 0);
    let refreshed = [("provider", "xero"), ("outcome", "refreshed")];
    let counted = a.counter("grantry_refreshes_total", &refreshed).await
        + b.counter("grantry_refreshes_total", &refreshed).await;
    assert_eq!(counted, 1.0, "the one refresh, counted once");
}

async fn invalid_grant_asks_for_a_new_sign_in(store: &[String]) {
    let (a, b, fake, _dir) = two_replicas(store, "xero").await;
    fake.set(|s| s.refuse_refresh = true);
    let result = list(&b).await;
    assert_eq!(result["resultType"], "input_required", "{result}");
    let request = result["inputRequests"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(request["params"]["mode"], "url");
    assert!(b.log_shows("connection.needs_reauth").await);
    let needs_reauth = [("provider", "xero"), ("outcome", "needs_reauth")];
    assert_eq!(
        b.counter("grantry_refreshes_total", &needs_reauth).await,
        1.0
    );
    let again = list(&a).await;
    assert_eq!(
        again["resultType"], "input_required",
        "the connection needs the user everywhere"
    );
}

async fn a_refresh_that_times_out_is_not_retried_blindly(store: &[String]) {
    // FreshBooks: single-use refresh tokens, no grace window, a replay revokes everything.
    let (a, b, fake, _dir) = two_replicas(store, "freshbooks").await;
    // The provider rotates, then answers after grantry's 10 s timeout.
    fake.set(|s| s.refresh_delay = Duration::from_secs(12));
    let first = list_from(&a, "freshbooks").await;
    assert_eq!(first["isError"], true, "a retryable error: {first}");
    assert!(
        first["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("try again")
    );
    fake.set(|s| s.refresh_delay = Duration::ZERO);
    let second = list_from(&b, "freshbooks").await;
    assert_eq!(second["isError"], true, "{second}");
    assert_eq!(
        fake.counters.refreshes.load(Ordering::SeqCst),
        1,
        "no second refresh with a token the provider may have rotated"
    );
    assert_eq!(fake.counters.family_revocations.load(Ordering::SeqCst), 0);
}

on_shared_stores!(one_refresh_for_a_hundred_concurrent_calls);
on_shared_stores!(invalid_grant_asks_for_a_new_sign_in);
on_shared_stores!(a_refresh_that_times_out_is_not_retried_blindly);
