//! Form-mode elicitation on the billing tools: `create_invoice` asks for exactly the fields
//! its validator rejects, as many rounds as needed, and creates once; `void_invoice` voids
//! only on `accept` with `confirm: true`. Against the demo provider and the Xero fake, with
//! rounds answered on another replica.

use serde_json::{Value, json};

use crate::adapters::{connect, grant_write_access, grantry_with_fakes};
use crate::support::mcp::{Answer, url_and_form};
use crate::support::{Browser, Mcp, Server, servers};

fn good_invoice() -> Value {
    json!({"email": "ap@acme.example", "customer_name": "Acme GmbH", "amount": "120.50",
        "currency": "EUR", "due_date": "2099-12-31", "description": "Consulting, November"})
}

/// The fields a form round asks for, and its message.
fn asked(answer: &Answer) -> (Vec<String>, String) {
    let result = answer.result();
    assert_eq!(result["resultType"], "input_required", "{}", answer.raw);
    let params = &result["inputRequests"]["invoice_details"]["params"];
    assert_eq!(params["mode"], "form");
    let fields = params["requestedSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    (fields, params["message"].as_str().unwrap().to_owned())
}

fn state_of(answer: &Answer) -> String {
    answer.result()["requestState"].as_str().unwrap().to_owned()
}

async fn demo_connected() -> (Server, Mcp) {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, state, key) = mcp.first_round().await;
    Browser::new().sign_in(&link, true).await;
    let done = mcp
        .retry(
            "list_invoices",
            json!({}),
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    assert_eq!(done.result()["resultType"], "complete");
    grant_write_access(&mcp, "demo").await;
    (server, mcp)
}

async fn created(server: &Server) -> u64 {
    server.demo_stats().await["invoices_created"]
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn create_invoice_asks_for_exactly_the_invalid_fields_until_valid_and_creates_once() {
    let (server, mcp) = demo_connected().await;
    let mut args = good_invoice();
    args["email"] = json!("ap-at-acme");
    args.as_object_mut().unwrap().remove("due_date");
    let first = mcp
        .call_tool("create_invoice", args.clone(), url_and_form())
        .await;
    let (fields, message) = asked(&first);
    assert_eq!(fields, ["due_date", "email"]);
    assert!(
        message.contains("Enter a valid email address."),
        "{message}"
    );
    assert!(
        message.contains("Enter a due date of today or later"),
        "{message}"
    );

    // Still invalid email, valid due date: asked again for the email alone.
    let second = mcp
        .retry(
            "create_invoice",
            args.clone(),
            json!({"invoice_details": {"action": "accept",
                "content": {"email": "still wrong", "due_date": "2099-06-30"}}}),
            &state_of(&first),
        )
        .await;
    let (fields, _) = asked(&second);
    assert_eq!(fields, ["email"], "the valid due date is not asked again");
    assert_eq!(created(&server).await, 0);

    let answer = json!({"invoice_details": {"action": "accept",
        "content": {"email": "ap@acme.example"}}});
    let third = mcp
        .retry(
            "create_invoice",
            args.clone(),
            answer.clone(),
            &state_of(&second),
        )
        .await;
    let result = third.result();
    assert_eq!(result["isError"], false, "{}", third.raw);
    let invoice = &result["structuredContent"]["invoice"];
    assert_eq!(invoice["amount_minor"], 12050);
    assert_eq!(invoice["currency"], "EUR");
    assert_eq!(invoice["status"], "open");
    assert_eq!(created(&server).await, 1);

    // The client retries the last round (a lost answer, say): the same invoice, not a second.
    let again = mcp
        .retry("create_invoice", args.clone(), answer, &state_of(&second))
        .await;
    assert_eq!(
        again.result()["structuredContent"]["invoice"]["id"],
        invoice["id"]
    );
    assert_eq!(created(&server).await, 1);

    // A state replayed with other arguments, or tampered with, is refused.
    let mut other = args.clone();
    other["amount"] = json!("999");
    let replay = mcp
        .retry("create_invoice", other, json!({}), &state_of(&second))
        .await;
    assert_eq!(replay.error_code(), -32602);
    let mut tampered = state_of(&second);
    tampered.replace_range(10..11, if &tampered[10..11] == "A" { "B" } else { "A" });
    let bad = mcp
        .retry("create_invoice", args, json!({}), &tampered)
        .await;
    assert_eq!(bad.error_code(), -32602);
}

#[tokio::test]
async fn declining_or_cancelling_creates_nothing_and_a_blind_client_gets_the_reasons() {
    let (server, mcp) = demo_connected().await;
    let mut args = good_invoice();
    args["amount"] = json!(-5);
    for action in ["decline", "cancel"] {
        let first = mcp
            .call_tool("create_invoice", args.clone(), url_and_form())
            .await;
        let done = mcp
            .retry(
                "create_invoice",
                args.clone(),
                json!({"invoice_details": {"action": action}}),
                &state_of(&first),
            )
            .await;
        assert_eq!(done.result()["content"][0]["text"], "Creation cancelled.");
    }
    assert_eq!(created(&server).await, 0);
    // No form elicitation: invalid arguments are named in a tool error; valid ones succeed.
    let url_only = json!({"elicitation": {"url": {}}});
    let blind = mcp
        .call_tool("create_invoice", args, url_only.clone())
        .await;
    assert_eq!(blind.result()["isError"], true);
    let text = blind.result()["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("`amount`") && text.contains("greater than zero"),
        "{text}"
    );
    let ok = mcp
        .call_tool("create_invoice", good_invoice(), url_only)
        .await;
    assert_eq!(ok.result()["isError"], false, "{}", ok.raw);
    assert_eq!(created(&server).await, 1);
}

/// The void confirmation for `id`: (fields asked, message, state).
async fn ask_to_void(mcp: &Mcp, provider: &str, id: &str) -> (String, String) {
    let first = mcp
        .call_tool(
            "void_invoice",
            json!({"provider": provider, "invoice_id": id}),
            url_and_form(),
        )
        .await;
    let result = first.result();
    assert_eq!(result["resultType"], "input_required", "{}", first.raw);
    let params = &result["inputRequests"]["confirm"]["params"];
    assert_eq!(
        params["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    (
        params["message"].as_str().unwrap().to_owned(),
        state_of(&first),
    )
}

/// Creates an invoice of 99.00 GBP for Acme GmbH at Xero; the call's answer.
pub async fn create_at_xero(mcp: &Mcp) -> Answer {
    mcp.call_tool(
        "create_invoice",
        json!({"provider": "xero", "email": "ap@acme.example", "customer_name": "Acme GmbH",
            "amount": 99, "currency": "GBP", "due_date": "2099-01-31"}),
        url_and_form(),
    )
    .await
}

#[tokio::test]
async fn void_invoice_voids_only_on_an_explicit_yes_for_that_invoice() {
    let (a, fake, _dir) = grantry_with_fakes("xero", &[]).await;
    let mcp = Mcp::new(a.mcp_url());
    connect(&a, &mcp, "xero").await;
    grant_write_access(&mcp, "xero").await;
    let made = create_at_xero(&mcp).await;
    let invoice = made.result()["structuredContent"]["invoice"].clone();
    assert_eq!(invoice["status"], "open", "{}", made.raw);
    let id = invoice["id"].as_str().unwrap().to_owned();
    let number = invoice["number"].as_str().unwrap().to_owned();
    let status_at_xero = || {
        fake.written.lock().unwrap().created[&id]["Status"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    let blind = mcp
        .call_tool(
            "void_invoice",
            json!({"provider": "xero", "invoice_id": id}),
            json!({"elicitation": {"url": {}}}),
        )
        .await;
    // A client that cannot confirm: a tool result saying so, which the model reads.
    assert_eq!(blind.result()["isError"], true, "{}", blind.raw);
    let said = blind.result()["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("nothing was changed"), "{said}");
    assert_eq!(status_at_xero(), "AUTHORISED");
    for answer in [
        json!({"action": "accept", "content": {"confirm": false}}),
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
    ] {
        let (message, state) = ask_to_void(&mcp, "xero", &id).await;
        assert!(
            message.contains(&number)
                && message.contains("Acme GmbH")
                && message.contains("99.00 GBP"),
            "{message}"
        );
        assert!(message.contains("cannot be undone"));
        let done = mcp
            .retry(
                "void_invoice",
                json!({"provider": "xero", "invoice_id": id}),
                json!({ "confirm": answer }),
                &state,
            )
            .await;
        assert_eq!(
            done.result()["content"][0]["text"],
            "Void cancelled; nothing was changed."
        );
        assert_eq!(status_at_xero(), "AUTHORISED", "{answer}");
    }
    // A confirmation cannot be carried over to another invoice.
    let (_, state) = ask_to_void(&mcp, "xero", &id).await;
    let yes = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let other = mcp
        .retry(
            "void_invoice",
            json!({"provider": "xero", "invoice_id": "c0ffee99-0000-4000-8000-000000000000"}),
            yes.clone(),
            &state,
        )
        .await;
    assert_eq!(other.error_code(), -32602);
    assert_eq!(status_at_xero(), "AUTHORISED");
    // Yes: voided at Xero.
    let done = mcp
        .retry(
            "void_invoice",
            json!({"provider": "xero", "invoice_id": id}),
            yes.clone(),
            &state,
        )
        .await;
    let text = done.result()["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("Voided invoice {number}")),
        "{text}"
    );
    assert_eq!(status_at_xero(), "VOIDED");
    assert_eq!(fake.written.lock().unwrap().voids, 1);
    // The spent confirmation sent again acts no more, and says so.
    let replayed = mcp
        .retry(
            "void_invoice",
            json!({"provider": "xero", "invoice_id": id}),
            yes,
            &state,
        )
        .await;
    assert_eq!(
        replayed.result()["content"][0]["text"],
        format!("Invoice {number} is already void; nothing was changed."),
        "{}",
        replayed.raw
    );
    assert_eq!(fake.written.lock().unwrap().voids, 1, "voided once");
}

#[tokio::test]
async fn a_form_answered_on_another_replica_finishes_the_creation() {
    let Some((store, _guard)) = servers::postgres_store().await else {
        return;
    };
    let key = grantry::seal::generate_key();
    let mut args = servers::as_strs(&store);
    args.extend(["--keys", &key]);
    let a = Server::start(&args).await;
    let b = Server::start_beside(&a, &args).await;
    let on_a = Mcp::new(a.mcp_url());
    let (link, state, input) = on_a.first_round().await;
    Browser::new().sign_in(&link, true).await;
    on_a.retry(
        "list_invoices",
        json!({}),
        json!({ input: {"action": "accept"} }),
        &state,
    )
    .await;
    grant_write_access(&on_a, "demo").await;
    let mut partial = good_invoice();
    partial.as_object_mut().unwrap().remove("email");
    let first = on_a
        .call_tool("create_invoice", partial.clone(), url_and_form())
        .await;
    assert_eq!(asked(&first).0, ["email"]);
    let done = Mcp::new(b.mcp_url())
        .retry(
            "create_invoice",
            partial,
            json!({"invoice_details": {"action": "accept", "content": {"email": "ap@acme.example"}}}),
            &state_of(&first),
        )
        .await;
    assert_eq!(done.result()["isError"], false, "{}", done.raw);
    assert_eq!(
        created(&a).await,
        1,
        "created once, at the provider behind the public URL"
    );
}

#[tokio::test]
async fn writes_refresh_once_on_a_refused_token_as_listing_does() {
    let (a, fake, _dir) = grantry_with_fakes("xero", &[]).await;
    let mcp = Mcp::new(a.mcp_url());
    connect(&a, &mcp, "xero").await;
    grant_write_access(&mcp, "xero").await;
    let refreshes = || {
        fake.counters
            .refreshes
            .load(std::sync::atomic::Ordering::SeqCst)
    };
    fake.revoke_access_tokens();
    let made = mcp
        .call_tool(
            "create_invoice",
            json!({"provider": "xero", "email": "ap@acme.example", "customer_name": "Acme GmbH",
                "amount": 12, "currency": "EUR", "due_date": "2099-01-31"}),
            url_and_form(),
        )
        .await;
    assert_eq!(made.result()["isError"], false, "{}", made.raw);
    assert_eq!(refreshes(), 1, "the refused token was refreshed once");
    let id = made.result()["structuredContent"]["invoice"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    fake.revoke_access_tokens();
    let (_, state) = ask_to_void(&mcp, "xero", &id).await;
    assert_eq!(refreshes(), 2);
    fake.revoke_access_tokens();
    let done = mcp
        .retry(
            "void_invoice",
            json!({"provider": "xero", "invoice_id": id}),
            json!({"confirm": {"action": "accept", "content": {"confirm": true}}}),
            &state,
        )
        .await;
    let text = done.result()["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Voided invoice"), "{text}");
    assert_eq!(refreshes(), 3);
}

#[tokio::test]
async fn writing_at_a_provider_grantry_cannot_write_to_changes_nothing_and_says_so() {
    let (server, fake, _dir) = grantry_with_fakes("stripe", &[]).await;
    let mcp = Mcp::new(server.mcp_url());
    connect(&server, &mcp, "stripe").await;
    let mut invoice = good_invoice();
    invoice["provider"] = json!("stripe");
    let create = mcp
        .call_tool("create_invoice", invoice, url_and_form())
        .await;
    let result = create.result();
    assert_eq!(result["resultType"], "complete", "{}", create.raw);
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["content"][0]["text"],
        "grantry cannot create invoices at Stripe yet; nothing was created."
    );
    let void = mcp
        .call_tool(
            "void_invoice",
            json!({"provider": "stripe", "invoice_id": "in_1"}),
            url_and_form(),
        )
        .await;
    let result = void.result();
    assert_eq!(result["isError"], true, "{}", void.raw);
    assert_eq!(
        result["content"][0]["text"],
        "grantry cannot void invoices at Stripe yet; nothing was changed."
    );
    let written = fake.written.lock().unwrap();
    assert!(written.created.is_empty() && written.voids == 0);
}
