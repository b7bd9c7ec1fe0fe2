//! Several accounts at one provider: a person connects two Xero organisations (the fake Xero
//! lets them pick one at consent, and names the sign-in in its access token as Xero does).
//! `list_invoices` with both and no `account` asks which one in a form (or, to a client that
//! cannot show forms, answers with the list and changes nothing); with `account` it lists that
//! organisation's invoices only. Reconnecting one keeps its connection; disconnecting one
//! while another stays ends exactly that organisation at Xero (`DELETE /connections/{id}`;
//! revoking the token would end both). A tool with a confirmation (`disconnect_account`) asks
//! which account first and confirms at the one chosen.

use std::sync::atomic::Ordering;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::connections::{connected_to_xero, link_to};
use crate::invoice_forms::create_at_xero;
use crate::support::fake_providers::{Fake, XERO_TENANTS};
use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server};

const FIRST: &str = "Demo Company (UK)";
const SECOND: &str = "Second Company (NZ)";

/// Signs in through a link of the connections page whose text is `words`, picking `tenant`
/// at the fake Xero's consent.
async fn sign_in_from_page(server: &Server, fake: &Fake, words: &str, tenant: &'static str) {
    fake.set(|s| s.xero_tenant = tenant);
    let browser = Browser::new();
    let page = browser.get(&format!("{}/connections", server.base)).await;
    let link = link_to(&page.body, words);
    let authorize = browser.continue_at(&link).await;
    let callback = browser.get(&authorize).await.location().unwrap();
    let landed = browser.get(&callback).await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER, "{}", landed.body);
}

/// Disconnects through the connections page: the link whose text is `words`, then its
/// confirmation.
async fn disconnect_from_page(server: &Server, words: &str) {
    let browser = Browser::new();
    let page = browser.get(&format!("{}/connections", server.base)).await;
    let ask = browser
        .get(&format!("{}{}", server.base, link_to(&page.body, words)))
        .await;
    let done = browser
        .submit_with(&ask.form(), &[("origin", server.base.as_str())])
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
}

/// (account name, connection id) of each connection, in the order listed.
async fn accounts(mcp: &Mcp) -> Vec<(String, String)> {
    mcp.connections().await["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["account"].as_str().unwrap().to_owned(),
                c["connection_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn invoice_numbers(result: &Value) -> Vec<String> {
    result["structuredContent"]["invoices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["number"].as_str().unwrap().to_owned())
        .collect()
}

async fn two_organisations_are_two_connections(store: &[String]) {
    let (server, fake, mcp) = connected_to_xero(store).await;
    sign_in_from_page(
        &server,
        &fake,
        "Connect another Xero account",
        XERO_TENANTS[1].0,
    )
    .await;
    let both = accounts(&mcp).await;
    let names: Vec<&str> = both.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, [FIRST, SECOND]);
    assert_ne!(both[0].1, both[1].1, "two connections");

    // No `account`: asked which, in a form offering exactly the two.
    let asked = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let round = asked.result();
    assert_eq!(round["resultType"], "input_required", "{}", asked.raw);
    let question = &round["inputRequests"]["account_choice"]["params"];
    assert_eq!(question["mode"], "form");
    let offered: Vec<&str> = question["requestedSchema"]["properties"]["account"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["title"].as_str().unwrap())
        .collect();
    assert_eq!(offered, [FIRST, SECOND]);
    let state = round["requestState"].as_str().unwrap();
    let answer = |account: &str| json!({"account_choice": {"action": "accept", "content": {"account": account}}});
    let chosen = mcp
        .retry("list_invoices", json!({}), answer("tenant-2"), state)
        .await;
    let listed = chosen.result();
    assert_eq!(listed["resultType"], "complete", "{}", chosen.raw);
    assert_eq!(listed["structuredContent"]["account"], SECOND);
    let numbers = invoice_numbers(listed);
    assert!(!numbers.is_empty());
    assert!(
        numbers.iter().all(|n| n.starts_with("INV-B")),
        "{numbers:?}"
    );

    // An answer naming an account that was not offered is asked again; a decline does nothing.
    let again = mcp
        .retry("list_invoices", json!({}), answer("tenant-8"), state)
        .await;
    assert_eq!(again.result()["resultType"], "input_required");
    let declined = mcp
        .retry(
            "list_invoices",
            json!({}),
            json!({"account_choice": {"action": "decline"}}),
            state,
        )
        .await;
    assert_eq!(declined.result()["resultType"], "complete");
    assert_eq!(declined.result()["isError"], true, "{}", declined.raw);
    assert!(declined.result()["structuredContent"].is_null());

    // A client that cannot show a form gets the list to choose from; nothing changes.
    let url_only = json!({"elicitation": {"url": {}}});
    let refused = mcp.call_tool("list_invoices", json!({}), url_only).await;
    let text = refused.result()["content"][0]["text"].as_str().unwrap();
    assert_eq!(refused.result()["isError"], true, "{}", refused.raw);
    for named in [FIRST, SECOND, "tenant-1", "tenant-2", "`account`"] {
        assert!(text.contains(named), "{named} in {text}");
    }
    assert_eq!(accounts(&mcp).await, both);

    // With `account` (by name, any case): that organisation's invoices only.
    let first = mcp
        .call_tool(
            "list_invoices",
            json!({"account": "demo company (uk)"}),
            url_and_form(),
        )
        .await;
    assert_eq!(first.result()["structuredContent"]["account"], FIRST);
    let numbers = invoice_numbers(first.result());
    assert!(
        numbers.iter().all(|n| !n.starts_with("INV-B")),
        "{numbers:?}"
    );
    let unknown = mcp
        .call_tool(
            "list_invoices",
            json!({"account": "Nobody Ltd"}),
            url_and_form(),
        )
        .await;
    assert_eq!(unknown.result()["isError"], true, "{}", unknown.raw);

    // Reconnecting the second keeps its connection (and the first).
    sign_in_from_page(
        &server,
        &fake,
        &format!("Reconnect Xero ({SECOND})"),
        XERO_TENANTS[1].0,
    )
    .await;
    assert_eq!(accounts(&mcp).await, both);

    // Disconnecting the first revokes exactly its grant at Xero and leaves the second.
    disconnect_from_page(&server, &format!("Disconnect Xero ({FIRST})")).await;
    assert_eq!(*fake.counters.revoked_tenants.lock().unwrap(), ["tenant-1"]);
    // Ended alone (`DELETE /connections/{id}`), not by revoking the token: at Xero that would
    // end the second organisation too.
    assert_eq!(fake.counters.revocations.load(Ordering::SeqCst), 0);
    assert_eq!(accounts(&mcp).await, both[1..]);

    // A tool with a confirmation asks which account first, then confirms at that one.
    sign_in_from_page(
        &server,
        &fake,
        "Connect another Xero account",
        XERO_TENANTS[0].0,
    )
    .await;
    let args = json!({"provider": "xero"});
    let without_form = json!({"elicitation": {"url": {}}});
    let refused = mcp
        .call_tool("disconnect_account", args.clone(), without_form)
        .await;
    // Without forms it cannot confirm at all: a tool error the model reads, nothing changed.
    assert_eq!(refused.result()["isError"], true, "{}", refused.raw);
    let text = refused.result()["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("nothing was changed") && text.contains("confirm"),
        "{text}"
    );
    assert_eq!(accounts(&mcp).await.len(), 2);
    let which = mcp
        .call_tool("disconnect_account", args.clone(), url_and_form())
        .await;
    let round = which.result();
    assert!(
        round["inputRequests"]["account_choice"].is_object(),
        "{}",
        which.raw
    );
    let confirm = mcp
        .retry(
            "disconnect_account",
            args.clone(),
            answer("tenant-2"),
            round["requestState"].as_str().unwrap(),
        )
        .await;
    let question = confirm.result();
    let message = question["inputRequests"]["confirm"]["params"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains(SECOND), "{}", confirm.raw);
    let done = mcp
        .retry(
            "disconnect_account",
            args,
            json!({"confirm": {"action": "accept", "content": {"confirm": true}}}),
            question["requestState"].as_str().unwrap(),
        )
        .await;
    assert_eq!(done.result()["isError"], false, "{}", done.raw);
    assert_eq!(
        *fake.counters.revoked_tenants.lock().unwrap(),
        ["tenant-1", "tenant-2"]
    );
    assert_eq!(fake.counters.revocations.load(Ordering::SeqCst), 0);
    let left: Vec<String> = accounts(&mcp).await.into_iter().map(|(n, _)| n).collect();
    assert_eq!(left, [FIRST]);
}

on_every_store!(two_organisations_are_two_connections);

/// A confirmation is pinned to the account it was asked at. Asked while the first organisation
/// was the only one, answered after the person swapped it for the second (where the same
/// invoice id exists too: ids repeat across a provider's companies), the yes voids nothing.
#[tokio::test]
async fn a_yes_given_at_one_organisation_voids_nothing_at_another() {
    let (server, fake, mcp) = connected_to_xero(&[]).await;
    crate::adapters::grant_write_access(&mcp, "xero").await;
    let made = create_at_xero(&mcp).await;
    let id = made.result()["structuredContent"]["invoice"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let args = json!({"provider": "xero", "invoice_id": id});
    let asked = mcp
        .call_tool("void_invoice", args.clone(), url_and_form())
        .await;
    let question = asked.result();
    assert!(
        question["inputRequests"]["confirm"].is_object(),
        "{}",
        asked.raw
    );
    let message = question["inputRequests"]["confirm"]["params"]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("Acme GmbH"), "{message}");

    disconnect_from_page(&server, &format!("Disconnect Xero ({FIRST})")).await;
    sign_in_from_page(&server, &fake, "Connect Xero", XERO_TENANTS[1].0).await;
    let now: Vec<String> = accounts(&mcp).await.into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        now,
        [SECOND],
        "the same call now means the second organisation"
    );

    let yes = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let answered = mcp
        .retry(
            "void_invoice",
            args,
            yes,
            question["requestState"].as_str().unwrap(),
        )
        .await;
    assert_eq!(answered.error_code(), -32602, "{}", answered.raw);
    assert!(
        answered
            .raw
            .contains("the confirmation was given for something else"),
        "{}",
        answered.raw
    );
    assert_eq!(fake.written.lock().unwrap().voids, 0, "voided nowhere");
}

/// Write access is asked for at the organisation the person chose (incremental consent), and
/// the call goes on there once it is granted: not asked which account again, nothing written
/// at the other, whose connection still only reads.
#[tokio::test]
async fn write_access_is_asked_at_the_organisation_chosen_and_the_call_goes_on_there() {
    let (server, fake, mcp) = connected_to_xero(&[]).await;
    let another = "Connect another Xero account";
    sign_in_from_page(&server, &fake, another, XERO_TENANTS[1].0).await;
    let args = json!({"provider": "xero", "email": "ap@acme.example", "customer_name": "Acme GmbH",
        "amount": 99, "currency": "GBP", "due_date": "2099-01-31"});
    let asked = mcp
        .call_tool("create_invoice", args.clone(), url_and_form())
        .await;
    let round = asked.result();
    assert!(
        round["inputRequests"]["account_choice"].is_object(),
        "{}",
        asked.raw
    );
    let choice =
        json!({"account_choice": {"action": "accept", "content": {"account": "tenant-2"}}});
    let chose = mcp
        .retry(
            "create_invoice",
            args.clone(),
            choice,
            round["requestState"].as_str().unwrap(),
        )
        .await;
    let (link, state, key) = chose.sign_in_round();
    assert_eq!(key, "connect_xero");

    let browser = Browser::new();
    let authorize = browser.continue_at(&link).await;
    let callback = browser.get(&authorize).await.location().unwrap();
    assert_eq!(browser.get(&callback).await.status, StatusCode::SEE_OTHER);
    let done = mcp
        .retry(
            "create_invoice",
            args,
            json!({ &key: {"action": "accept"} }),
            &state,
        )
        .await;
    let result = done.result();
    assert_eq!(result["resultType"], "complete", "{}", done.raw);
    assert_eq!(result["isError"], false, "{}", done.raw);
    assert_eq!(fake.written.lock().unwrap().created.len(), 1);
    let scopes: Vec<(String, Value)> = mcp.connections().await["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["account"].as_str().unwrap().to_owned(),
                c["scopes"].clone(),
            )
        })
        .collect();
    assert_eq!(
        scopes,
        [
            (
                FIRST.to_owned(),
                json!(["offline_access", "accounting.invoices.read"])
            ),
            (
                SECOND.to_owned(),
                json!([
                    "offline_access",
                    "accounting.invoices.read",
                    "accounting.invoices"
                ])
            ),
        ]
    );
}

/// The heading of the connection to `account` on the connections page, as text.
fn heading_of(body: &str, account: &str) -> String {
    let at = body
        .find(&format!("Xero: {account}"))
        .unwrap_or_else(|| panic!("no {account} in {body}"));
    let heading = &body[at..at + body[at..].find("</h2>").unwrap()];
    let mut text = String::new();
    let mut in_tag = false;
    for c in heading.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text
}

/// An organisation whose connection needs a new sign-in is said to, in words, wherever the
/// person or the model chooses among the accounts: the form's option, the list a client
/// without forms gets, and the connections page (a mark beside its name, not colour alone).
#[tokio::test]
async fn a_broken_account_is_marked_wherever_accounts_are_chosen() {
    let (server, fake, mcp) = connected_to_xero(&[]).await;
    // Xero stops accepting the first organisation's grant; the next call finds out.
    fake.revoke_everything();
    let broke = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    assert_eq!(
        broke.result()["resultType"],
        "input_required",
        "{}",
        broke.raw
    );
    sign_in_from_page(
        &server,
        &fake,
        "Connect another Xero account",
        XERO_TENANTS[1].0,
    )
    .await;
    let states: Vec<String> = mcp.connections().await["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["state"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(states, ["needs_reauth", "active"]);

    let asked = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let question = &asked.result()["inputRequests"]["account_choice"]["params"];
    let offered: Vec<&str> = question["requestedSchema"]["properties"]["account"]["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("no choice: {}", asked.raw))
        .iter()
        .map(|o| o["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        [
            &format!("{FIRST} (needs reconnecting: you will be asked to sign in again)"),
            SECOND
        ]
    );

    let without_form = json!({"elicitation": {"url": {}}});
    let listed = mcp
        .call_tool("list_invoices", json!({}), without_form)
        .await;
    let said = listed.result()["content"][0]["text"].as_str().unwrap();
    assert!(
        said.contains(&format!("{FIRST} (id tenant-1, needs reconnecting")),
        "{said}"
    );
    assert!(said.contains(&format!("{SECOND} (id tenant-2)")), "{said}");

    let page = Browser::new()
        .get(&format!("{}/connections", server.base))
        .await;
    assert_eq!(
        heading_of(&page.body, FIRST),
        format!("Xero: {FIRST} ⚠ Needs reconnecting")
    );
    assert_eq!(heading_of(&page.body, SECOND), format!("Xero: {SECOND}"));
}
