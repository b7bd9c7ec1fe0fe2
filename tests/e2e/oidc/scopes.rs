//! Scopes per tool: a token that may read gets 403 `insufficient_scope` for a tool that
//! writes, naming every scope that call needs, in both eras; with the scope the call runs.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::doors::Person;
use super::oidc_server;
use crate::support::legacy::LegacySession;
use crate::support::mcp::{Answer, url_and_form};
use crate::support::oidc::{access_token_with_scope, provider, user};
use crate::support::{Mcp, Server};

pub(super) const SCOPES: [&str; 6] = [
    "--oidc-scopes",
    "invoices",
    "--oidc-read-scopes",
    "invoices:read",
    "--oidc-write-scopes",
    "invoices:write",
];

/// An access token for a new user with `invoices` (what every request needs) and `scope`.
async fn token(server: &Server, scope: &str) -> String {
    let scope = format!("openid invoices {scope}").trim_end().to_owned();
    access_token_with_scope(
        &provider().issuer,
        &user("scoped"),
        &server.mcp_url(),
        "test-client",
        &scope,
    )
    .await
}

/// The answer is the step-up challenge naming `scope`; no JSON-RPC answer, nothing ran.
pub(super) fn assert_step_up(answer: &Answer, server: &Server, scope: &str) {
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.raw);
    let challenge = answer.headers["www-authenticate"].to_str().unwrap();
    assert_eq!(
        challenge,
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", error_description=\"the token lacks a required scope\"",
            server.base
        )
    );
    assert!(answer.body.get("result").is_none(), "{}", answer.raw);
}

#[tokio::test]
async fn a_tool_that_writes_asks_a_reading_token_to_step_up_in_both_eras() {
    let server = oidc_server(&SCOPES).await;
    let reader = token(&server, "invoices:read").await;
    let mcp = Mcp::with_bearer(server.mcp_url(), reader.clone());
    let draft = json!({});

    let read = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    read.sign_in_round();
    let write = mcp
        .call_tool("create_invoice", draft.clone(), url_and_form())
        .await;
    assert_step_up(&write, &server, "invoices invoices:write");
    // disconnect_account needs no scope of its own here (no --oidc-manage-scopes): it runs,
    // and says there is nothing to disconnect.
    let disconnect = mcp
        .call_tool(
            "disconnect_account",
            json!({"provider": "demo"}),
            url_and_form(),
        )
        .await;
    let said = disconnect.result()["content"][0]["text"].as_str().unwrap();
    assert!(
        said.contains("not connected") || said.contains("No "),
        "{said}"
    );

    let legacy = LegacySession::open(&server.mcp_url(), Some(&reader), url_and_form()).await;
    assert_step_up(
        &legacy.call_tool("create_invoice", draft.clone()).await,
        &server,
        "invoices invoices:write",
    );
    // Nor as a body this era's reader takes as a call though it names another method first.
    let twice = r#"{"jsonrpc":"2.0","id":77,"method":"tools/list","method":"tools/call","params":{"name":"create_invoice","arguments":{}}}"#;
    assert_step_up(
        &legacy.request_raw(twice).await,
        &server,
        "invoices invoices:write",
    );
    // What it may do runs: a sign-in asked for, as a legacy call gets it.
    let listed = legacy.call_tool("list_invoices", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.raw);
    assert_eq!(listed.error_code(), -32042, "{}", listed.raw);

    // After the step-up: the token holds both, and the call runs (its first form round).
    let writer = token(&server, "invoices:read invoices:write").await;
    let mcp = Mcp::with_bearer(server.mcp_url(), writer);
    let written = mcp.call_tool("create_invoice", draft, url_and_form()).await;
    assert_eq!(written.status, StatusCode::OK, "{}", written.raw);
    written.result();

    // A token that may not even read is named what reading needs.
    let neither = token(&server, "").await;
    let mcp = Mcp::with_bearer(server.mcp_url(), neither);
    let read = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    assert_step_up(&read, &server, "invoices invoices:read");
}

/// With the account connected for writing, a refused call would have written: the invoices
/// the demo made stay as they were, and the same call with the scope makes one.
#[tokio::test]
async fn a_refused_write_writes_nothing_and_the_same_call_with_the_scope_does() {
    let server = oidc_server(&SCOPES).await;
    let ed = Person::new(&server, "scopes-ed").await;
    ed.connect_demo_for_writing().await;
    let invoice = json!({"provider": "demo", "email": "ap@acme.example",
        "customer_name": "Acme GmbH", "amount": 12, "currency": "EUR",
        "due_date": "2099-01-31"});
    let made = || async {
        server.demo_stats().await["invoices_created"]
            .as_u64()
            .unwrap()
    };
    let before = made().await;
    let refused = ed
        .reader
        .call_tool("create_invoice", invoice.clone(), url_and_form())
        .await;
    assert_step_up(&refused, &server, "invoices invoices:write");
    assert_eq!(made().await, before, "nothing ran");
    let done = ed
        .writer
        .call_tool("create_invoice", invoice, url_and_form())
        .await;
    assert_eq!(done.result()["isError"], false, "{}", done.raw);
    assert_eq!(made().await, before + 1);
}

/// `--oidc-manage-scopes`: disconnecting asks for its own scope, named in the step-up; the
/// connection stays until a token with it asks.
#[tokio::test]
async fn disconnecting_needs_the_manage_scope_when_one_is_set() {
    let mut flags = SCOPES.to_vec();
    flags.extend(["--oidc-manage-scopes", "invoices:manage"]);
    let server = oidc_server(&flags).await;
    let fay = Person::new(&server, "scopes-fay").await;
    fay.connect_demo_for_writing().await;
    let disconnect = json!({"provider": "demo"});
    let refused = fay
        .writer
        .call_tool("disconnect_account", disconnect.clone(), url_and_form())
        .await;
    assert_step_up(&refused, &server, "invoices invoices:manage");
    let still = fay.writer.connections().await;
    assert_eq!(still["connections"].as_array().unwrap().len(), 1, "{still}");
    let asked = fay
        .token_with("openid invoices invoices:read invoices:manage")
        .await
        .call_tool("disconnect_account", disconnect, url_and_form())
        .await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.raw);
    assert_eq!(
        asked.result()["resultType"],
        "input_required",
        "its confirmation: {}",
        asked.raw
    );
}

#[tokio::test]
async fn the_metadata_lists_every_scope_a_tool_needs() {
    let server = oidc_server(&SCOPES).await;
    let metadata: Value = reqwest::get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        server.base
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        metadata["scopes_supported"],
        json!(["invoices", "invoices:read", "invoices:write"])
    );
}
