//! Every client reaches the sign-in: the MCP Apps connect card for hosts that render apps but
//! show no link (both eras, on the wire as written), the demo's users as accounts, the link
//! in `-32042`'s message, and a sign-in link a client accepted but showed nobody.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::legacy::LegacySession;
use crate::support::mcp::{Answer, url_and_form};
use crate::support::{Browser, Mcp, Server};

const CARD: &str = "ui://grantry/connect-card.html";
const APP_MIME: &str = "text/html;profile=mcp-app";

/// What a web host that renders MCP Apps declares: the UI extension, no elicitation.
fn apps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [APP_MIME]}}})
}

fn text(answer: &Answer) -> String {
    answer.result()["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {}", answer.raw))
        .to_owned()
}

/// The connect link in a text, where it ends the text.
fn link_in(text: &str, server: &Server) -> String {
    let at = text
        .find(&format!("{}/connect/", server.base))
        .unwrap_or_else(|| panic!("no connect link in: {text}"));
    text[at..].trim_end().to_owned()
}

fn strict_csp(meta: &Value) {
    let csp = &meta["ui"]["csp"];
    for list in [
        "connectDomains",
        "resourceDomains",
        "frameDomains",
        "baseUriDomains",
    ] {
        assert_eq!(csp[list], json!([]), "{list} in {meta}");
    }
}

#[tokio::test]
async fn discovery_and_initialize_declare_the_resources_and_the_ui_extension() {
    let server = Server::start(&[]).await;
    let discovered = Mcp::new(server.mcp_url())
        .request("server/discover", json!({}), json!({}))
        .await;
    let capabilities = &discovered.result()["capabilities"];
    assert_eq!(capabilities["resources"], json!({}), "{}", discovered.raw);
    assert_eq!(
        capabilities["extensions"]["io.modelcontextprotocol/ui"],
        json!({})
    );
    let session = LegacySession::open(&server.mcp_url(), None, apps()).await;
    let legacy = &session.initialized.body["result"]["capabilities"];
    assert_eq!(
        legacy["resources"],
        json!({}),
        "{}",
        session.initialized.raw
    );
    assert_eq!(
        legacy["extensions"]["io.modelcontextprotocol/ui"],
        json!({})
    );
}

#[tokio::test]
async fn the_card_is_listed_and_read_with_the_strictest_csp_in_both_eras() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let listed = mcp.request("resources/list", json!({}), apps()).await;
    let list = listed.result();
    assert_eq!(list["cacheScope"], "public", "{}", listed.raw);
    assert!(list["ttlMs"].as_u64().is_some());
    let card = &list["resources"][0];
    assert_eq!(card["uri"], CARD);
    assert_eq!(card["mimeType"], APP_MIME);
    strict_csp(&card["_meta"]);

    let read = mcp
        .request("resources/read", json!({"uri": CARD}), apps())
        .await;
    let contents = &read.result()["contents"][0];
    assert_eq!(contents["mimeType"], APP_MIME, "{}", read.raw);
    strict_csp(&contents["_meta"]);
    assert_eq!(
        contents["_meta"]["openai/widgetCSP"]["redirect_domains"],
        json!([server.base])
    );
    let html = contents["text"].as_str().unwrap();
    assert!(html.starts_with("<!doctype html>") && html.contains("ui/initialize"));
    assert!(
        !html.contains("g1."),
        "the card is static: no sealed value in it"
    );

    let unknown = mcp
        .request(
            "resources/read",
            json!({"uri": "ui://grantry/nope"}),
            apps(),
        )
        .await;
    assert_eq!(unknown.error_code(), -32602, "{}", unknown.raw);
    assert_eq!(unknown.body["error"]["data"]["uri"], "ui://grantry/nope");
    let templates = mcp
        .request("resources/templates/list", json!({}), apps())
        .await;
    assert_eq!(templates.result()["resourceTemplates"], json!([]));

    // The legacy era serves the same card.
    let session = LegacySession::open(&server.mcp_url(), None, apps()).await;
    let listed = session.request("resources/list", json!({})).await;
    assert_eq!(
        listed.result()["resources"][0]["uri"],
        CARD,
        "{}",
        listed.raw
    );
    let read = session
        .request("resources/read", json!({"uri": CARD}))
        .await;
    let legacy = &read.result()["contents"][0];
    assert_eq!(legacy["text"].as_str(), Some(html), "{}", read.raw);
    strict_csp(&legacy["_meta"]);
    let unknown = session
        .request("resources/read", json!({"uri": "ui://grantry/nope"}))
        .await;
    assert_eq!(unknown.error_code(), -32602, "{}", unknown.raw);
}

#[tokio::test]
async fn the_tool_list_binds_connect_account_to_the_card_and_keeps_the_poll_from_the_model() {
    let server = Server::start(&[]).await;
    let listed = Mcp::new(server.mcp_url())
        .request("tools/list", json!({}), apps())
        .await;
    let tools = listed.result()["tools"].as_array().unwrap().clone();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
    let connect = tool("connect_account");
    assert_eq!(connect["_meta"]["ui"]["resourceUri"], CARD);
    assert_eq!(connect["_meta"]["ui/resourceUri"], CARD);
    assert_eq!(
        connect["_meta"]["ui"]["visibility"],
        json!(["model", "app"])
    );
    let status = tool("connection_status");
    assert_eq!(status["_meta"]["ui"]["visibility"], json!(["app"]));
    assert_eq!(status["_meta"]["openai/visibility"], "private");
    assert!(tool("list_invoices").get("_meta").is_none());
}

#[tokio::test]
async fn a_host_with_the_card_is_sent_to_it_and_the_card_sees_the_sign_in() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let denied = mcp.call_tool("list_invoices", json!({}), apps()).await;
    assert_eq!(denied.result()["resultType"], "complete", "{}", denied.raw);
    assert_eq!(denied.result()["isError"], true);
    let said = text(&denied);
    assert!(
        said.contains("connect_account") && said.contains(r#"{"provider":"demo"}"#),
        "the model is told what to call: {said}"
    );
    link_in(&said, &server);
    assert_eq!(server.count_rows("flows").await, 0, "nothing is written");

    let card = mcp.call_tool("connect_account", json!({}), apps()).await;
    let result = card.result();
    assert_eq!(result["isError"], false, "{}", card.raw);
    assert_eq!(result["structuredContent"]["status"], "connect_required");
    assert_eq!(result["structuredContent"]["provider"], "demo");
    assert_eq!(result["structuredContent"]["connections"], json!([]));
    assert_eq!(result["_meta"]["ui"]["resourceUri"], CARD);
    let link = result["_meta"]["grantry/connect"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(
        link_in(&text(&card), &server),
        link,
        "a link of its own in the words: its page says to ask again, the card's to press \
         Continue (tests/e2e/connected_page.rs)"
    );
    let status = || mcp.call_tool("connection_status", json!({"provider": "demo"}), apps());
    assert_eq!(
        status().await.result()["structuredContent"]["connections"],
        json!([])
    );

    Browser::new()
        .sign_in_as(&link, "alice")
        .await
        .assert_connected();
    let seen = status().await;
    let connection = &seen.result()["structuredContent"]["connections"][0];
    assert_eq!(connection["account"], "alice", "{}", seen.raw);
    assert_eq!(connection["state"], "active");
    assert!(connection["signed_in_at"].as_i64().unwrap() > 0);
    let listed = mcp.call_tool("list_invoices", json!({}), apps()).await;
    assert_eq!(listed.result()["isError"], false, "{}", listed.raw);
    assert_eq!(listed.result()["structuredContent"]["account"], "alice");
    let again = mcp.call_tool("connect_account", json!({}), apps()).await;
    assert_eq!(again.result()["structuredContent"]["status"], "connected");
}

#[tokio::test]
async fn a_legacy_host_with_the_card_gets_the_same_answers() {
    let server = Server::start(&[]).await;
    let session = LegacySession::open(&server.mcp_url(), None, apps()).await;
    let denied = session.call_tool("list_invoices", json!({})).await;
    assert_eq!(denied.result()["isError"], true, "{}", denied.raw);
    assert!(text(&denied).contains("connect_account"));
    let card = session.call_tool("connect_account", json!({})).await;
    let result = card.result();
    assert_eq!(
        result["structuredContent"]["status"], "connect_required",
        "{}",
        card.raw
    );
    let link = result["_meta"]["grantry/connect"]["url"].as_str().unwrap();
    Browser::new().sign_in(link, true).await.assert_connected();
    let listed = session.call_tool("list_invoices", json!({})).await;
    assert_eq!(listed.result()["isError"], false, "{}", listed.raw);
}

#[tokio::test]
async fn two_demo_users_are_two_connections_and_disconnecting_one_leaves_the_other() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    Browser::new()
        .sign_in_as(&link, "alice")
        .await
        .assert_connected();
    let card = mcp
        .call_tool("connect_account", json!({}), url_and_form())
        .await;
    let another = card.result()["_meta"]["grantry/connect"]["url"]
        .as_str()
        .unwrap();
    Browser::new()
        .sign_in_as(another, "bob")
        .await
        .assert_connected();

    let accounts = |connections: &Value| -> Vec<String> {
        connections["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["account"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(accounts(&mcp.connections().await), ["alice", "bob"]);
    let page = Browser::new()
        .get(&format!("{}/connections", server.base))
        .await;
    assert!(
        page.body.contains("alice") && page.body.contains("bob"),
        "{}",
        page.body
    );

    // A host with the card and no forms is told the accounts, and of the card to pick one.
    let which = mcp.call_tool("list_invoices", json!({}), apps()).await;
    let said = text(&which);
    assert!(said.contains("alice") && said.contains("bob") && said.contains("connect_account"));
    let listed = mcp
        .call_tool("list_invoices", json!({"account": "bob"}), apps())
        .await;
    assert_eq!(
        listed.result()["structuredContent"]["account"],
        "bob",
        "{}",
        listed.raw
    );

    let asked = mcp
        .call_tool(
            "disconnect_account",
            json!({"provider": "demo", "account": "alice"}),
            url_and_form(),
        )
        .await;
    let state = asked.result()["requestState"].as_str().unwrap().to_owned();
    let done = mcp
        .request(
            "tools/call",
            json!({"name": "disconnect_account", "arguments": {"provider": "demo", "account": "alice"},
                   "requestState": state,
                   "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
            url_and_form(),
        )
        .await;
    assert_eq!(done.result()["isError"], false, "{}", done.raw);
    assert_eq!(accounts(&mcp.connections().await), ["bob"]);
}

#[tokio::test]
async fn a_32042_names_its_link_in_the_message_too() {
    let server = Server::start(&[]).await;
    let session = LegacySession::open(&server.mcp_url(), None, url_and_form()).await;
    let answer = session.call_tool("list_invoices", json!({})).await;
    assert_eq!(answer.error_code(), -32042, "{}", answer.raw);
    let url = answer.body["error"]["data"]["elicitations"][0]["url"]
        .as_str()
        .unwrap();
    let message = answer.body["error"]["message"].as_str().unwrap();
    assert!(message.contains(url), "{message}");
}

fn accept(key: &str) -> Value {
    json!({ key: {"action": "accept"} })
}

/// The retry of a sign-in round, accepted (a client that says it showed the link).
async fn accepted_retry(mcp: &Mcp) -> (String, Answer) {
    let (link, state, key) = mcp.first_round().await;
    let retry = mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    (link, retry)
}

#[tokio::test]
async fn a_sign_in_nobody_opened_is_answered_soon_with_its_link() {
    let server = Server::start(&["--unopened-link-wait", "2", "--retry-hold", "60"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let started = Instant::now();
    let (link, retry) = accepted_retry(&mcp).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "answered long before the hold's end: {:?}",
        started.elapsed()
    );
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
    assert_eq!(retry.result()["isError"], true);
    let said = text(&retry);
    assert!(said.contains("has not opened"), "{said}");
    let passed_on = link_in(&said, &server);
    assert_ne!(
        passed_on, link,
        "a fresh link, for the model to pass on: nothing waits for it any more"
    );
    assert_eq!(server.count_rows("flows").await, 0);
    let counted = server
        .counter("grantry_sign_ins_total", &[("outcome", "link_not_opened")])
        .await;
    assert_eq!(counted, 1.0);
    // The link passed on works: the person signs in, is told to ask again, and the call
    // asked again completes.
    let signed_in = Browser::new().sign_in(&passed_on, true).await;
    signed_in.assert_connected();
    assert!(
        signed_in.final_page.body.contains("ask it again"),
        "{}",
        signed_in.final_page.body
    );
    let again = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    assert_eq!(again.result()["isError"], false, "{}", again.raw);
}

#[tokio::test]
async fn an_opened_link_is_held_for_as_before() {
    let server = Server::start(&["--unopened-link-wait", "1", "--retry-hold", "4"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, state, key) = mcp.first_round().await;
    let page = Browser::new().get(&link).await;
    assert_eq!(page.status, StatusCode::OK);
    let started = Instant::now();
    let retry = mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "held: {:?}",
        started.elapsed()
    );
    let (again, _, _) = retry.sign_in_round();
    assert_eq!(again, link, "asked again with the same link");
}

#[tokio::test]
async fn a_connection_that_needs_renewing_is_reconnected_through_the_card() {
    let (_server, fake, mcp) = crate::connections::connected_to_xero(&[]).await;
    let before = mcp.connections().await["connections"][0].clone();
    fake.revoke_everything();
    let xero = json!({"provider": "xero"});
    let denied = mcp.call_tool("list_invoices", xero.clone(), apps()).await;
    let said = text(&denied);
    assert!(
        said.contains("needs to be renewed") && said.contains("connect_account"),
        "{said}"
    );

    let card = mcp.call_tool("connect_account", xero.clone(), apps()).await;
    let shown = &card.result()["structuredContent"];
    assert_eq!(shown["status"], "reconnect", "{}", card.raw);
    assert_eq!(shown["connections"][0]["state"], "needs_reauth");
    assert_eq!(
        shown["connections"][0]["connection_id"],
        before["connection_id"]
    );
    let link = card.result()["_meta"]["grantry/connect"]["url"]
        .as_str()
        .unwrap();
    let redeemed = || fake.counters.code_redemptions.load(Ordering::SeqCst);
    let codes_before = redeemed();
    let browser = Browser::new();
    let authorize = browser.continue_at(link).await;
    let callback = browser.get(&authorize).await.location().unwrap();
    assert_eq!(browser.get(&callback).await.status, StatusCode::SEE_OTHER);
    assert_eq!(redeemed(), codes_before + 1, "a new sign-in at Xero");

    let seen = mcp
        .call_tool("connection_status", xero.clone(), apps())
        .await;
    let after = &seen.result()["structuredContent"]["connections"][0];
    assert_eq!(after["state"], "active", "{}", seen.raw);
    assert_eq!(
        after["connection_id"], before["connection_id"],
        "the same connection"
    );
    // Renewed for real: Xero, which refused every earlier token, takes the new one.
    let listed = mcp.call_tool("list_invoices", xero, apps()).await;
    assert_eq!(listed.result()["isError"], false, "{}", listed.raw);
}
