//! Callers with no person behind them: a client-credentials token from oidc-provider, and a
//! person's token marked by `--non-interactive-claim`, never get a sign-in link, a card or a
//! form; the tool says no person can sign in, and nothing is written.

use serde_json::{Value, json};

use super::oidc_server;
use crate::support::legacy::LegacySession;
use crate::support::mcp::{Answer, url_and_form};
use crate::support::oidc::{access_token, client_credentials_token, provider, user};
use crate::support::{Mcp, Server};

/// Everything a client can declare that reaches a person: both elicitation modes and the
/// MCP Apps card.
fn everything() -> Value {
    let mut all = url_and_form();
    all["extensions"] = json!({"io.modelcontextprotocol/ui":
        {"mimeTypes": ["text/html;profile=mcp-app"]}});
    all
}

/// The call's answer is a tool error saying no person can sign in, with no link in it.
fn assert_no_person_answer(answer: &Answer, server: &Server) {
    let result = answer.result();
    // `complete` in the 2026-07-28 era; the legacy era's results name no type.
    assert_ne!(result["resultType"], "input_required", "{}", answer.raw);
    assert_eq!(result["isError"], true, "{}", answer.raw);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("no person can sign in"), "{text}");
    assert!(
        !answer.raw.contains("/connect/") && !answer.raw.contains(&server.base),
        "no link: {}",
        answer.raw
    );
}

#[tokio::test]
async fn a_client_credentials_caller_gets_no_link_no_card_and_no_form() {
    let server = oidc_server(&[]).await;
    let token = client_credentials_token(&provider().issuer, &server.mcp_url(), "invoices").await;
    let mcp = Mcp::with_bearer(server.mcp_url(), token.clone());
    for tool in ["list_invoices", "connect_account"] {
        let answer = mcp.call_tool(tool, json!({}), everything()).await;
        assert_no_person_answer(&answer, &server);
    }
    // A confirmation is never asked of anyone either.
    let void = mcp
        .call_tool("void_invoice", json!({"invoice_id": "INV-1"}), everything())
        .await;
    assert_eq!(void.result()["resultType"], "complete", "{}", void.raw);
    assert_eq!(void.result()["isError"], true);
    let said = void.result()["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("no person is behind this caller"), "{said}");

    // The legacy era: no -32042, no elicitation/create; the same tool error.
    let session = LegacySession::open(&server.mcp_url(), Some(&token), everything()).await;
    let legacy = session.call_tool("list_invoices", json!({})).await;
    assert_no_person_answer(&legacy, &server);

    assert_eq!(server.count_rows("flows").await, 0, "no sign-in started");
    assert_eq!(server.count_rows("grants").await, 0);

    a_person_still_gets_the_sign_in(&server, "test-client").await;
}

#[tokio::test]
async fn a_claim_named_by_non_interactive_claim_marks_a_caller_with_no_person() {
    // oidc-provider's access tokens carry `client_id`: mark test-client's as agents'.
    let server = oidc_server(&["--non-interactive-claim", "client_id=test-client"]).await;
    let marked = access_token(
        &provider().issuer,
        &user("agent"),
        &server.mcp_url(),
        "test-client",
    )
    .await;
    let mcp = Mcp::with_bearer(server.mcp_url(), marked);
    let answer = mcp
        .call_tool("list_invoices", json!({}), everything())
        .await;
    assert_no_person_answer(&answer, &server);
    assert_eq!(server.count_rows("flows").await, 0);

    a_person_still_gets_the_sign_in(&server, "expiring-client").await;
}

/// A person's token from `client_id` on the same server still gets the sign-in round.
async fn a_person_still_gets_the_sign_in(server: &Server, client_id: &str) {
    let person = access_token(
        &provider().issuer,
        &user("person"),
        &server.mcp_url(),
        client_id,
    )
    .await;
    let mcp = Mcp::with_bearer(server.mcp_url(), person);
    let round = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    round.sign_in_round();
}
