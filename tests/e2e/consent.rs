//! Incremental consent, end to end: a sign-in asks the provider only for what the calling
//! tool needs, and write access is asked for, on the same connection, when a tool first
//! writes. Against the Xero fake (support::fake_providers: it records the scopes asked,
//! names those granted in its token answer, and refuses an API call its token's scopes do
//! not allow, as Xero does) with a webhook receiver verifying every event, and against the
//! built-in demo provider, whose consent page lets a person allow reading only.

use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::adapters::connect;
use crate::support::fake_providers::Fake;
use crate::support::mcp::url_and_form;
use crate::support::webhooks::Receiver;
use crate::support::{Browser, Mcp, Server};

/// The arguments of a complete `create_invoice` at Xero (no form needed).
fn invoice_at_xero() -> Value {
    json!({"provider": "xero", "email": "ap@acme.example", "customer_name": "Acme GmbH",
        "amount": 99, "currency": "GBP", "due_date": "2099-01-31"})
}

/// grantry with the fakes (Xero first) and events to `receiver`.
async fn grantry_at_xero(fake: &Fake, receiver: &Receiver, dir: &tempfile::TempDir) -> Server {
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog("xero")).unwrap();
    let mut args = vec![
        "--providers".to_owned(),
        catalog.to_str().unwrap().to_owned(),
    ];
    args.extend(receiver.flags(&["hooks"], "1,1,1"));
    Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>()).await
}

/// The `scope` an authorize URL asks for.
fn scope_asked(authorize_url: &str) -> String {
    url::Url::parse(authorize_url)
        .unwrap()
        .query_pairs()
        .find(|(name, _)| name == "scope")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

/// The one connection `list_connections` shows.
async fn the_connection(mcp: &Mcp) -> Value {
    let listed = mcp.connections().await;
    let connections = listed["connections"].as_array().unwrap();
    assert_eq!(connections.len(), 1, "{listed}");
    connections[0].clone()
}

/// Through the Xero fake's consent from a connect link; the page the callback sent the
/// browser to (its URL says whether fewer scopes were granted than asked).
async fn sign_in_at_xero(link: &str) -> (String, String) {
    let browser = Browser::new();
    let authorize = browser.continue_at(link).await;
    let back = browser.get(&authorize).await;
    let callback = back.location().expect("the fake redirects back");
    let landed = browser.get(&callback).await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER, "{}", landed.body);
    (authorize, landed.location().unwrap())
}

#[tokio::test]
async fn write_access_is_asked_for_on_the_same_connection_when_a_tool_first_writes() {
    let (fake, receiver) = (Fake::start().await, Receiver::start());
    let dir = tempfile::tempdir().unwrap();
    let server = grantry_at_xero(&fake, &receiver, &dir).await;
    let mcp = Mcp::new(server.mcp_url());

    connect(&server, &mcp, "xero").await;
    let asked = fake.counters.xero_scopes_asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        ["offline_access accounting.invoices.read"],
        "reading only"
    );
    let before = the_connection(&mcp).await;
    assert_eq!(
        before["scopes"],
        json!(["offline_access", "accounting.invoices.read"])
    );

    let first = mcp
        .call_tool("create_invoice", invoice_at_xero(), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();
    assert_eq!(key, "connect_xero");
    let message = first.result()["inputRequests"][&key]["params"]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("create and change invoices"), "{message}");
    assert!(fake.written.lock().unwrap().created.is_empty());

    let (authorize, landed) = sign_in_at_xero(&link).await;
    assert_eq!(
        scope_asked(&authorize),
        "offline_access accounting.invoices.read accounting.invoices",
        "the union of what it has and what the tool needs"
    );
    assert!(!landed.contains("granted=less"), "{landed}");

    let retry = mcp
        .retry(
            "create_invoice",
            invoice_at_xero(),
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    let result = retry.result();
    assert_eq!(result["resultType"], "complete", "{}", retry.raw);
    assert_eq!(result["isError"], false, "{}", retry.raw);
    assert_eq!(fake.written.lock().unwrap().created.len(), 1);

    let after = the_connection(&mcp).await;
    assert_eq!(after["connection_id"], before["connection_id"]);
    assert_eq!(
        after["scopes"],
        json!([
            "offline_access",
            "accounting.invoices.read",
            "accounting.invoices"
        ])
    );
    assert_eq!(fake.counters.refused_for_scope.load(Ordering::SeqCst), 0);

    let events = receiver.wait_for(3, Duration::from_secs(20)).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "connection.created",
            "connection.reconnected",
            "connection.scopes_changed"
        ]
    );
    let changed = &events[2];
    assert_eq!(changed["connection_id"], before["connection_id"]);
    assert_eq!(changed["data"]["scopes"], after["scopes"]);
    assert_eq!(changed["data"]["previous_scopes"], before["scopes"]);
    let state = receiver.state().await;
    assert_eq!(state["forged"], 0, "{state}");
}

#[tokio::test]
async fn a_provider_granting_less_than_asked_is_told_and_nothing_is_written() {
    let (fake, receiver) = (Fake::start().await, Receiver::start());
    let dir = tempfile::tempdir().unwrap();
    let server = grantry_at_xero(&fake, &receiver, &dir).await;
    let mcp = Mcp::new(server.mcp_url());
    connect(&server, &mcp, "xero").await;
    let before = the_connection(&mcp).await;

    fake.set(|s| s.xero_withhold_write = true);
    let first = mcp
        .call_tool("create_invoice", invoice_at_xero(), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();
    let (_, landed) = sign_in_at_xero(&link).await;
    assert!(landed.contains("granted=less"), "{landed}");
    let page = Browser::new()
        .get(&format!("{}{landed}", server.base))
        .await;
    assert!(
        page.body.contains("less access than asked"),
        "the person is told: {}",
        page.body
    );

    let retry = mcp
        .retry(
            "create_invoice",
            invoice_at_xero(),
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    let result = retry.result();
    assert_eq!(result["isError"], true, "{}", retry.raw);
    let said = result["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("granted only part"), "{said}");
    assert!(said.contains("accounting.invoices"), "{said}");
    assert!(said.contains("nothing was written"), "{said}");
    assert!(fake.written.lock().unwrap().created.is_empty());
    assert_eq!(
        fake.counters.refused_for_scope.load(Ordering::SeqCst),
        0,
        "no write was tried with a token that cannot write"
    );
    let after = the_connection(&mcp).await;
    assert_eq!(after["connection_id"], before["connection_id"]);
    assert_eq!(after["state"], "active", "still reads: {after}");
    assert_eq!(after["scopes"], before["scopes"]);
    let listed = mcp
        .call_tool("list_invoices", json!({"provider": "xero"}), url_and_form())
        .await;
    assert_eq!(listed.result()["isError"], false, "{}", listed.raw);
}

#[tokio::test]
async fn the_demo_asks_to_read_first_and_a_person_may_allow_reading_only() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();
    let browser = Browser::new();
    let signed_in = browser.sign_in(&link, true).await;
    assert_eq!(scope_asked(&signed_in.authorize_url), "invoices:read");
    let listed = mcp
        .retry(
            "list_invoices",
            json!({}),
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    assert_eq!(listed.result()["resultType"], "complete", "{}", listed.raw);

    let args = json!({"email": "ap@acme.example", "customer_name": "Acme GmbH",
        "amount": "120.50", "currency": "EUR", "due_date": "2099-01-31"});
    let create = mcp
        .call_tool("create_invoice", args.clone(), url_and_form())
        .await;
    let (link, state, key) = create.sign_in_round();
    let consent = browser.get(&browser.continue_at(&link).await).await;
    assert!(
        consent.body.contains("Allow reading only"),
        "{}",
        consent.body
    );
    let signed_in = browser.sign_in_deciding(&link, "approve_read").await;
    assert!(
        signed_in.final_page.body.contains("less access than asked"),
        "{}",
        signed_in.final_page.body
    );
    let retry = mcp
        .retry(
            "create_invoice",
            args,
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    assert_eq!(retry.result()["isError"], true, "{}", retry.raw);
    let said = retry.result()["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("invoices:write"), "{said}");
    let connection = the_connection(&mcp).await;
    assert_eq!(connection["scopes"], json!(["invoices:read"]));
    assert_eq!(connection["state"], "active");
}
