//! `/connections` under `oidc`: each person sees only their own connections, a browser with
//! no session is sent to log in first, and no one can disconnect another's connection, not
//! with that person's form nor with their own form pointed at the other's id.

use reqwest::StatusCode;
use serde_json::json;

use super::oidc_server;
use crate::support::mcp::url_and_form;
use crate::support::oidc::{access_token, provider, user};
use crate::support::{Browser, Mcp, Server};

/// `name` logged in to grantry in a browser of their own, with the demo account connected.
async fn connected_as(server: &Server, name: &str) -> (Browser, Mcp) {
    let who = user(name);
    let token = access_token(&provider().issuer, &who, &server.mcp_url(), "test-client").await;
    let mcp = Mcp::with_bearer(server.mcp_url(), token);
    let (link, _, _) = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await
        .sign_in_round();
    let browser = Browser::new();
    let page = browser.open_signing_in_as(&link, &who).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    browser.sign_in(&link, true).await.assert_connected();
    (browser, mcp)
}

async fn connection_ids(mcp: &Mcp) -> Vec<String> {
    mcp.connections().await["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["connection_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn each_person_sees_and_disconnects_only_their_own() {
    let server = oidc_server(&[]).await;
    let page_url = format!("{}/connections", server.base);

    // No session: the page sends the browser to log in, and comes back to itself.
    let stranger = Browser::new();
    let login = stranger.get(&page_url).await;
    assert!(login.status.is_redirection(), "{}", login.status);
    assert!(login.location().unwrap().starts_with(&provider().issuer));
    let back = stranger.open_signing_in_as(&page_url, &user("carol")).await;
    assert_eq!(back.status, StatusCode::OK, "{}", back.body);
    assert!(
        back.body.contains("You have no connections"),
        "{}",
        back.body
    );

    let (alices, alice_mcp) = connected_as(&server, "alice").await;
    let (bobs, bob_mcp) = connected_as(&server, "bob").await;
    let alice_id = connection_ids(&alice_mcp).await.remove(0);
    let bob_id = connection_ids(&bob_mcp).await.remove(0);

    let alice_page = alices.get(&page_url).await;
    assert!(alice_page.body.contains(&alice_id) && !alice_page.body.contains(&bob_id));
    let bob_page = bobs.get(&page_url).await;
    assert!(bob_page.body.contains(&bob_id) && !bob_page.body.contains(&alice_id));

    // Bob asks for Alice's confirmation page: not his connection.
    let alice_confirm = format!("{page_url}/{alice_id}/disconnect");
    assert_eq!(bobs.get(&alice_confirm).await.status, StatusCode::NOT_FOUND);
    let origin = [("origin", server.base.as_str())];
    // Alice's own form, sent from Bob's browser: her token is not his.
    let alice_form = alices.get(&alice_confirm).await.form();
    let refused = bobs.submit_with(&alice_form, &origin).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    // Bob's own form, pointed at Alice's connection: not found among his.
    let mut bob_form = bobs
        .get(&format!("{page_url}/{bob_id}/disconnect"))
        .await
        .form();
    bob_form.action = bob_form.action.replace(&bob_id, &alice_id);
    let refused = bobs.submit_with(&bob_form, &origin).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND, "{}", refused.body);
    assert_eq!(
        connection_ids(&alice_mcp).await,
        std::slice::from_ref(&alice_id)
    );

    // Alice's form from Alice's browser does it, and Bob keeps his.
    let done = alices.submit_with(&alice_form, &origin).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert!(
        done.body.contains("Disconnected Demo Billing"),
        "{}",
        done.body
    );
    assert!(connection_ids(&alice_mcp).await.is_empty());
    assert_eq!(connection_ids(&bob_mcp).await, [bob_id]);
}
