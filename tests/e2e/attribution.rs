//! Who used which connection, and refusing one client (`grantry clients block`): one person
//! (a real OpenID Connect login, tests/oidc) calls through two registered MCP clients, one
//! with JWT access tokens (`test-client`) and one with opaque tokens grantry introspects
//! (`opaque-client`). The client each use came through is told apart on `/connections`, in
//! `grantry connections list` and in the signed lifecycle events; a blocked client's calls
//! get a tool error while the connections stay and the other client goes on working. In `dev`
//! identity the name a client declares is kept, marked unverified, and blocking it warns that
//! it blocks nothing, which a replica that reads the block shows.

use std::time::Duration;

use serde_json::{Value, json};

use crate::adapters::connect;
use crate::support::fake_providers::Fake;
use crate::support::mcp::Mcp;
use crate::support::operator::{json_of, list, messages, oidc_server, refused};
use crate::support::person::{Person, completes, list_invoices};
use crate::support::webhooks::Receiver;
use crate::support::{Browser, Server, legacy};

const JWT_CLIENT: &str = "test-client";
const OPAQUE_CLIENT: &str = "opaque-client";

/// Waits (up to 10 s: uses are recorded in the background) until the connection at
/// `provider` was last used through `client`, and returns it as listed.
async fn last_used_by(server: &Server, provider: &str, client: Value) -> Value {
    let mut seen = Value::Null;
    for _ in 0..100 {
        let all = list(server, &["--provider", provider]).await;
        seen = all.into_iter().next().unwrap_or_default();
        if seen["last_used_by"] == client {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{provider} was not last used by {client}: {seen}");
}

fn verified(client: &str) -> Value {
    json!({"client": client, "verified": true})
}

/// The connections page as `browser` sees it.
async fn connections_page(server: &Server, browser: &Browser) -> String {
    browser
        .get(&format!("{}/connections", server.base))
        .await
        .body
}

/// The section of the connections page about `provider_name`.
fn section<'p>(page: &'p str, provider_name: &str) -> &'p str {
    page.split("<section class=\"connection\"")
        .find(|s| s.contains(&format!(">{provider_name}")))
        .unwrap_or_else(|| panic!("no {provider_name} section in {page}"))
}

/// Calls `list_invoices` at `at` through `mcp` until `done` holds for the answer (up to
/// 10 s: a replica re-reads the blocklist every few seconds), and returns it.
async fn until(mcp: &Mcp, at: &str, done: fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..50 {
        last = list_invoices(mcp, at).await.result().clone();
        if done(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the call never came to what was awaited: {last}");
}

fn is_tool_error(result: &Value) -> bool {
    result["isError"] == true
}

async fn uses_are_told_apart_and_a_blocked_client_is_refused(store: &[String]) {
    let fake = Fake::start().await;
    let receiver = Receiver::start();
    let (server, _catalog) = oidc_server(store, &fake, &receiver).await;
    // Alice connects Stripe through one client, Xero through the other.
    let alice = Person::through(&server, "alice", JWT_CLIENT).await;
    alice.connect("stripe").await;
    let opaque = Person {
        mcp: alice.also_through(&server, OPAQUE_CLIENT).await,
        browser: Browser::new(),
        subject: alice.subject.clone(),
    };
    opaque.connect("xero").await;

    each_use_names_its_client(&server, &opaque.browser).await;
    bad_input_blocks_nothing(&server).await;
    a_blocked_client_is_refused(&server, &alice, &opaque.mcp).await;
    the_events_name_the_last_client(&server, &alice, &receiver).await;
}

/// The listings and the page tell the two clients apart.
async fn each_use_names_its_client(server: &Server, browser: &Browser) {
    let stripe = last_used_by(server, "stripe", verified(JWT_CLIENT)).await;
    let xero = last_used_by(server, "xero", verified(OPAQUE_CLIENT)).await;
    assert!(stripe["last_used_at"].is_string(), "{stripe}");
    assert!(xero["last_used_at"].is_string(), "{xero}");
    let text = server.operator(&["connections", "list"]).await;
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(
        text.lines()
            .any(|l| l.contains(" stripe ") && l.contains("last_used_by=\"test-client\"")),
        "{text}"
    );
    let page = connections_page(server, browser).await;
    assert!(
        section(&page, "Stripe").contains("Last used through"),
        "{page}"
    );
    assert!(section(&page, "Stripe").contains(JWT_CLIENT), "{page}");
    assert!(section(&page, "Xero").contains(OPAQUE_CLIENT), "{page}");
}

/// A clear message and exit code, and nothing blocked.
async fn bad_input_blocks_nothing(server: &Server) {
    let empty = server.operator(&["clients", "block", "", "--yes"]).await;
    refused(&empty, 2, "CLIENT_ID");
    let unconfirmed = server.operator(&["clients", "block", OPAQUE_CLIENT]).await;
    refused(&unconfirmed, 2, "pass --yes");
    let never_blocked = server
        .operator(&["clients", "unblock", "nobody", "--yes"])
        .await;
    refused(&never_blocked, 3, "not blocked");
    let blocked = server.operator(&["clients", "list", "--json"]).await;
    assert_eq!(json_of(&blocked), json!([]));
    let blocked = server.operator(&["clients", "list"]).await;
    assert!(blocked.status.success());
    assert_eq!(String::from_utf8_lossy(&blocked.stdout), "");
    let stderr = String::from_utf8_lossy(&blocked.stderr);
    assert_eq!(messages(&stderr), ["grantry: no clients are blocked"]);
}

/// Blocking the opaque client: its calls are refused, saying why; nothing is disconnected,
/// and the other client goes on working. Unblocked, it works again.
async fn a_blocked_client_is_refused(server: &Server, alice: &Person, opaque: &Mcp) {
    let done = server
        .operator(&["clients", "block", OPAQUE_CLIENT, "--yes", "--json"])
        .await;
    let done = json_of(&done);
    assert_eq!(done["result"], "blocked", "{done}");
    assert!(done.get("warning").is_none(), "a verified id: {done}");
    let refusal = until(opaque, "xero", is_tool_error).await;
    let why = refusal["content"][0]["text"].as_str().unwrap();
    assert!(
        why.contains("blocked the MCP client 'opaque-client'"),
        "{why}"
    );
    assert!(why.contains("connections are unchanged"), "{why}");
    assert!(is_tool_error(
        list_invoices(opaque, "stripe").await.result()
    ));
    assert!(completes(&list_invoices(&alice.mcp, "stripe").await));
    let states: Vec<Value> = list(server, &alice.user_flag())
        .await
        .into_iter()
        .map(|c| c["state"].clone())
        .collect();
    assert_eq!(states, [json!("active"), json!("active")], "both stay");
    let page = connections_page(server, &alice.browser).await;
    assert!(
        section(&page, "Xero").contains("blocked by the operator"),
        "{page}"
    );
    assert!(server.log_shows("client.refused").await);
    let blocked = json_of(&server.operator(&["clients", "list", "--json"]).await);
    assert_eq!(blocked[0]["client_id"], OPAQUE_CLIENT, "{blocked}");

    let again = server
        .operator(&["clients", "unblock", OPAQUE_CLIENT, "--yes"])
        .await;
    assert!(again.status.success());
    until(opaque, "xero", |r| {
        r["isError"] != true && r["resultType"] == "complete"
    })
    .await;
}

/// The signed lifecycle events of both connections' ends name the client each was last used
/// through.
async fn the_events_name_the_last_client(server: &Server, alice: &Person, receiver: &Receiver) {
    let revoke = [&["connections", "revoke", "--yes"][..], &alice.user_flag()].concat();
    assert!(server.operator(&revoke).await.status.success());
    let events = receiver.wait_for(4, Duration::from_secs(20)).await;
    let ended = |provider: &str| {
        events
            .iter()
            .find(|e| e["type"] == "connection.disconnected" && e["data"]["provider"] == provider)
            .unwrap_or_else(|| panic!("no end of {provider} in {events:?}"))
            .clone()
    };
    assert_eq!(
        ended("stripe")["data"]["last_used_by"],
        verified(JWT_CLIENT)
    );
    assert_eq!(
        ended("xero")["data"]["last_used_by"],
        verified(OPAQUE_CLIENT)
    );
}

on_every_store!(uses_are_told_apart_and_a_blocked_client_is_refused);

/// Without a verified client (`dev` identity), the name each client declares is kept,
/// marked as unverified: the 2026-07-28 era's `_meta`, the legacy era's `initialize`.
#[tokio::test]
async fn a_declared_name_is_kept_and_marked_unverified() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog("xero")).unwrap();
    let server = Server::start(&["--providers", catalog.to_str().unwrap()]).await;
    let mcp = Mcp::new(server.mcp_url());
    connect(&server, &mcp, "xero").await;
    let declared = |name: &str| json!({"client": name, "verified": false});
    last_used_by(&server, "xero", declared("grantry-e2e")).await;

    let session = legacy::LegacySession::open(&server.mcp_url(), None, json!({})).await;
    let answer = session
        .call_tool("list_invoices", json!({"provider": "xero"}))
        .await;
    assert_eq!(answer.result()["isError"], false, "{}", answer.raw);
    last_used_by(&server, "xero", declared("grantry-e2e-legacy")).await;
    let page = connections_page(&server, &Browser::new()).await;
    assert!(
        page.contains("grantry-e2e-legacy (a name the app gave itself, not verified)"),
        "{page}"
    );

    // A declared name cannot be blocked into refusing anything: only verified ids count,
    // and under `dev` identity none is, which the command says.
    let blocked = server
        .operator(&["clients", "block", "grantry-e2e-legacy", "--yes"])
        .await;
    let stderr = String::from_utf8_lossy(&blocked.stderr);
    assert!(blocked.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&blocked.stdout),
        "grantry-e2e-legacy: blocked\n"
    );
    let warning = messages(&stderr).join("\n");
    assert!(
        warning.starts_with("grantry: warning: this grantry verifies no MCP client"),
        "{stderr}"
    );
    assert!(warning.contains("so this blocks nothing"), "{stderr}");
    let declared = ["clients", "block", "grantry-e2e", "--yes", "--json"];
    let declared = server.operator(&declared).await;
    let said: Value = serde_json::from_slice(&declared.stdout).unwrap();
    assert_eq!(said["result"], "blocked", "{said}");
    assert!(
        said["warning"]
            .as_str()
            .is_some_and(|w| w.contains("blocks nothing")),
        "{said}"
    );
    let listed = json_of(&server.operator(&["clients", "list", "--json"]).await);
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");

    // A replica started now has no copy of the list: the first call that consults it reads
    // the store, which holds both blocks. Both clients' calls still complete.
    let server = server.restart().await;
    assert!(completes(&list_invoices(&mcp, "xero").await));
    let session = legacy::LegacySession::open(&server.mcp_url(), None, json!({})).await;
    let answer = session
        .call_tool("list_invoices", json!({"provider": "xero"}))
        .await;
    assert_eq!(answer.result()["isError"], false, "{}", answer.raw);
}
