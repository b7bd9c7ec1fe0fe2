//! Scopes per tool: a token that may read gets 403 `insufficient_scope` for a tool that
//! writes, naming every scope that call needs, in both eras; with the scope the call runs.

use reqwest::StatusCode;
use serde_json::{Value, json};

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
    let disconnect = mcp
        .call_tool(
            "disconnect_account",
            json!({"provider": "demo"}),
            url_and_form(),
        )
        .await;
    assert_eq!(
        disconnect.status,
        StatusCode::OK,
        "no scope of its own: {}",
        disconnect.raw
    );

    let legacy = LegacySession::open(&server.mcp_url(), Some(&reader), url_and_form()).await;
    assert_step_up(
        &legacy.call_tool("create_invoice", draft.clone()).await,
        &server,
        "invoices invoices:write",
    );
    let listed = legacy.call_tool("list_invoices", json!({})).await;
    assert_ne!(listed.status, StatusCode::FORBIDDEN, "{}", listed.raw);

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
