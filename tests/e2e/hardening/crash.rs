//! A replica killed (SIGKILL) during the token request leaves its flow `redeeming`. Its owner
//! coming back is not taken for an attacker: told to wait while it could still finish, then
//! told to start again, and the same link works.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::StatusCode;

use crate::support::fake_providers::Fake;
use crate::support::{Browser, Mcp, Server};

#[tokio::test]
async fn a_crash_during_the_token_request_is_recovered_not_reported_as_an_attack() {
    let fake = Fake::start().await;
    fake.set(|s| s.code_delay = Duration::from_secs(5));
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog("xero")).unwrap();
    let server = Server::start(&["--providers", catalog.to_str().unwrap()]).await;
    let (link, _, _) = Mcp::new(server.mcp_url()).first_round().await;

    let browser = Arc::new(Browser::new());
    let authorize = browser.continue_at(&link).await;
    let callback = browser
        .get(&authorize)
        .await
        .location()
        .expect("the fake approves at once");
    // The callback claims the flow and waits on the token endpoint; the replica dies.
    let hanging = {
        let (browser, callback) = (browser.clone(), callback.clone());
        tokio::spawn(async move { browser.get(&callback).await })
    };
    // The fake has the code (it counts it before its delay): the replica is mid-exchange.
    for _ in 0..500 {
        if fake.counters.code_redemptions.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(fake.counters.code_redemptions.load(Ordering::SeqCst), 1);
    let mut server = server;
    server.kill();
    hanging.abort();
    let server = server.restart().await;

    // Back at once: the sign-in could still be finishing elsewhere.
    let page = browser.get(&callback).await;
    assert_eq!(page.status, StatusCode::CONFLICT, "{}", page.body);
    assert!(page.body.contains("still finishing"), "{}", page.body);

    // Past the deadline: it failed; start again.
    server
        .execute("UPDATE flows SET claimed_at = claimed_at - 120")
        .await;
    let page = browser.get(&callback).await;
    assert_eq!(page.status, StatusCode::BAD_GATEWAY, "{}", page.body);
    assert!(page.body.contains("did not finish"), "{}", page.body);
    assert!(page.body.contains("start over"), "{}", page.body);
    assert_eq!(server.count_rows("grants").await, 0);
    let log = server.settled_log().await;
    assert!(log.contains("callback.stuck_flow_failed"), "{log}");
    assert!(
        !log.contains("security event"),
        "a recovery is not an attack:\n{log}"
    );

    // The same link starts a new sign-in, which completes.
    fake.set(|s| s.code_delay = Duration::ZERO);
    let authorize = browser.continue_at(&link).await;
    let callback = browser.get(&authorize).await.location().unwrap();
    let landed = browser.get(&callback).await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER, "{}", landed.body);
    assert_eq!(server.count_rows("grants").await, 1);
}

#[tokio::test]
async fn a_replayed_callback_names_the_flow_its_user_and_provider_in_the_alarm() {
    let server = Server::start(&["--log-format", "json"]).await;
    let (link, _, _) = Mcp::new(server.mcp_url()).first_round().await;
    let signed_in = Browser::new().sign_in(&link, true).await;
    signed_in.assert_connected();
    server.execute("UPDATE flows SET status = 'failed'").await;
    // Someone else replays the callback URL.
    let replay = Browser::new().get(&signed_in.callback_url).await;
    assert_eq!(replay.status, StatusCode::BAD_REQUEST);
    assert!(server.log_shows("callback.state_reused").await);
    let line = server
        .log()
        .lines()
        .find(|l| l.contains("callback.state_reused"))
        .unwrap()
        .to_owned();
    let event: serde_json::Value = serde_json::from_str(&line).unwrap();
    for field in ["principal", "provider", "flow"] {
        let value = event["fields"][field].as_str().unwrap_or_default();
        assert!(!value.is_empty(), "{field} in {line}");
    }
    assert_eq!(event["fields"]["provider"], "demo");
}
