//! The "connected" page says what is true: the account connected, and what the person does
//! next, by how the connect link reached them. A client that showed the link waits and goes
//! on by itself; a link passed on in words (link mode, the card's words) needs the person to
//! ask again; the connect card offers Continue; a sign-in from /connections needs nothing.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::connections::link_to;
use crate::support::browser::Page;
use crate::support::{Browser, Mcp, Server};

/// What a web host that renders MCP Apps declares: the UI extension, no elicitation.
fn apps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

/// The text of the element of `class` on the page (its first), if there is one.
fn text_of(page: &Page, class: &str) -> Option<String> {
    let at = page.body.find(&format!("class=\"{class}\">"))?;
    let rest = &page.body[at + class.len() + 9..];
    Some(rest[..rest.find('<')?].to_owned())
}

/// What the page tells the person to do next.
fn next_step(page: &Page) -> String {
    text_of(page, "next-step").unwrap_or_else(|| panic!("no next step: {}", page.body))
}

/// The connect link where it ends a tool's words.
fn link_in(answer: &Value, server: &Server) -> String {
    let text = answer["content"][0]["text"].as_str().unwrap();
    let at = text
        .find(&format!("{}/connect/", server.base))
        .unwrap_or_else(|| panic!("no connect link in: {text}"));
    text[at..].trim_end().to_owned()
}

/// The page a sign-in at `link` as the demo user `user` ends on.
async fn landed(link: &str, user: &str) -> Page {
    let signed_in = Browser::new().sign_in_as(link, user).await;
    signed_in.assert_connected();
    signed_in.final_page
}

#[tokio::test]
async fn a_link_passed_on_in_words_says_to_ask_again_and_names_the_account() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    // A client with forms but no URL elicitation: the link comes in the tool's words.
    let forms_only = json!({"elicitation": {"form": {}}});
    let denied = mcp
        .call_tool("list_invoices", json!({}), forms_only.clone())
        .await;
    assert_eq!(denied.result()["isError"], true, "{}", denied.raw);
    let page = landed(&link_in(denied.result(), &server), "alice").await;
    let said = next_step(&page);
    assert!(said.contains("ask it again"), "{said}");
    assert!(!said.contains("on its own"), "nothing waits: {said}");
    assert_eq!(text_of(&page, "account").as_deref(), Some("alice"));
    // And asked again, the call completes.
    let again = mcp.call_tool("list_invoices", json!({}), forms_only).await;
    assert_eq!(again.result()["isError"], false, "{}", again.raw);
}

#[tokio::test]
async fn a_link_the_client_showed_says_the_call_goes_on_by_itself() {
    let server = Server::start(&[]).await;
    let (link, _, _) = Mcp::new(server.mcp_url()).first_round().await;
    let page = landed(&link, "bob").await;
    let said = next_step(&page);
    assert!(said.contains("it will continue on its own"), "{said}");
    assert_eq!(text_of(&page, "account").as_deref(), Some("bob"));
}

#[tokio::test]
async fn the_card_says_press_continue_and_its_words_say_ask_again() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    // A tool that needs a connection sends the model to the card, with a link in its words.
    let denied = mcp.call_tool("list_invoices", json!({}), apps()).await;
    assert_eq!(denied.result()["isError"], true, "{}", denied.raw);
    let from_the_tool = link_in(denied.result(), &server);
    let card = mcp.call_tool("connect_account", json!({}), apps()).await;
    let for_card = card.result()["_meta"]["grantry/connect"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let in_words = link_in(card.result(), &server);
    assert_ne!(
        for_card, in_words,
        "a link each: their pages say different things"
    );

    let page = landed(&for_card, "alice").await;
    let said = next_step(&page);
    assert!(
        said.contains("press Continue on its connect card"),
        "{said}"
    );
    assert_eq!(text_of(&page, "account").as_deref(), Some("alice"));
    for (link, user) in [(in_words, "bob"), (from_the_tool, "carol")] {
        let page = landed(&link, user).await;
        assert!(next_step(&page).contains("ask it again"), "{}", page.body);
        assert_eq!(text_of(&page, "account").as_deref(), Some(user));
    }
}

#[tokio::test]
async fn a_sign_in_from_the_connections_page_needs_no_assistant() {
    let server = Server::start(&[]).await;
    let browser = Browser::new();
    let listed = browser.get(&format!("{}/connections", server.base)).await;
    let link = link_to(&listed.body, "Connect Demo Billing");
    let signed_in = browser.sign_in_as(&link, "alice").await;
    let page = signed_in.final_page;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let said = next_step(&page);
    assert!(said.contains("can use it from now on"), "{said}");
    assert!(!said.contains("Return to your assistant"), "{said}");
    assert_eq!(text_of(&page, "account").as_deref(), Some("alice"));
}

#[tokio::test]
async fn a_connected_url_made_by_hand_names_nothing_and_promises_nothing() {
    let server = Server::start(&[]).await;
    let (link, _, _) = Mcp::new(server.mcp_url()).first_round().await;
    let real = landed(&link, "alice").await;
    assert_eq!(text_of(&real, "account").as_deref(), Some("alice"));
    let receipt = real.url.split("receipt=").nth(1).unwrap().to_owned();
    let browser = Browser::new();
    for url in [
        format!("{}/connected?provider=demo", server.base),
        format!("{}/connected?provider=demo&receipt=g1.forged", server.base),
        // A real one, altered, does not open.
        format!(
            "{}/connected?provider=demo&receipt={}",
            server.base,
            &receipt[..receipt.len() - 4]
        ),
    ] {
        let page = browser.get(&url).await;
        assert_eq!(page.status, StatusCode::OK, "{url}: {}", page.body);
        let said = next_step(&page);
        assert!(
            said.contains("if it does not continue on its own, ask it again"),
            "{url}: {said}"
        );
        assert_eq!(text_of(&page, "account"), None, "{url}: {}", page.body);
    }
}
