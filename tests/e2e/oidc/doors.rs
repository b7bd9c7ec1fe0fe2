//! Scopes on every door: a call runs only with a token holding its tool's scopes, whichever
//! request makes it run: `tools/call`, the retry with a `requestState` minted under a broader
//! token, `tasks/update` answering a task's round, `tasks/get` stepping a task or showing its
//! result. Each refusal is the step-up 403 and changes nothing; the same request with the
//! scopes goes on. In the 2025-11-25 era a call runs inside its own `tools/call`, checked
//! when it arrives: the answer to a question it asks mid-call is a response, not a request
//! to run anything (docs/identity.md).

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::oidc_server;
use super::scopes::{SCOPES, assert_step_up};
use crate::support::legacy::LegacySession;
use crate::support::mcp::{Answer, url_and_form, with_tasks};
use crate::support::oidc::{access_token_with_scope, provider, user};
use crate::support::{Browser, Mcp, Server};

const WRITE: &str = "invoices invoices:write";
const READ: &str = "invoices invoices:read";

/// One person with three tokens: one that may write, one that may only read, and one with
/// only what every request needs; and a browser logged in to grantry as them.
pub(super) struct Person {
    name: String,
    server: String,
    browser: Browser,
    pub(super) writer: Mcp,
    pub(super) reader: Mcp,
    bare: Mcp,
    writer_token: String,
    reader_token: String,
}

impl Person {
    pub(super) async fn new(server: &Server, name: &str) -> Self {
        let name = user(name);
        let token = |scope: &'static str| {
            let (issuer, name, resource) =
                (provider().issuer.clone(), name.clone(), server.mcp_url());
            async move { access_token_with_scope(&issuer, &name, &resource, "test-client", scope).await }
        };
        let writer_token = token("openid invoices invoices:read invoices:write").await;
        let reader_token = token("openid invoices invoices:read").await;
        let bare_token = token("openid invoices").await;
        Person {
            name,
            server: server.mcp_url(),
            browser: Browser::new(),
            writer: Mcp::with_bearer(server.mcp_url(), writer_token.clone()),
            reader: Mcp::with_bearer(server.mcp_url(), reader_token.clone()),
            bare: Mcp::with_bearer(server.mcp_url(), bare_token),
            writer_token,
            reader_token,
        }
    }

    /// A client of theirs with a token of `scope`.
    pub(super) async fn token_with(&self, scope: &str) -> Mcp {
        let issuer = &provider().issuer;
        let token = access_token_with_scope(issuer, &self.name, &self.server, "test-client", scope);
        Mcp::with_bearer(self.server.clone(), token.await)
    }

    /// Signs in at `link` in the person's browser (logging in to grantry the first time).
    async fn sign_in(&self, link: &str) {
        let page = self.browser.open_signing_in_as(link, &self.name).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        self.browser.sign_in(link, true).await.assert_connected();
    }

    /// The demo connected, with write access granted (incremental consent).
    pub(super) async fn connect_demo_for_writing(&self) {
        let listed = self
            .writer
            .call_tool("list_invoices", json!({}), url_and_form());
        let (link, state, key) = listed.await.sign_in_round();
        self.sign_in(&link).await;
        let accept = json!({ &key: {"action": "accept"} });
        let retry = self
            .writer
            .retry("list_invoices", json!({}), accept, &state);
        assert_eq!(retry.await.result()["isError"], false);
        let args = json!({"provider": "demo", "invoice_id": "no-such-invoice"});
        let first = self
            .writer
            .call_tool("void_invoice", args.clone(), url_and_form())
            .await;
        let (link, state, key) = first.sign_in_round();
        self.browser.sign_in(&link, true).await.assert_connected();
        let accept = json!({ &key: {"action": "accept"} });
        let retry = self
            .writer
            .retry("void_invoice", args, accept, &state)
            .await;
        assert_eq!(
            retry.result()["isError"],
            true,
            "no such invoice: {}",
            retry.raw
        );
    }

    /// The demo's invoices, as the writer lists them.
    async fn invoices(&self) -> Vec<Value> {
        let answer = self
            .writer
            .call_tool("list_invoices", json!({"status": "all"}), url_and_form())
            .await;
        let result = answer.result();
        assert_eq!(result["isError"], false, "{}", answer.raw);
        result["structuredContent"]["invoices"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// The status of the demo's invoice `id`.
    async fn status_of(&self, id: &str) -> String {
        let invoices = self.invoices().await;
        let invoice = invoices.iter().find(|i| i["id"] == id).unwrap();
        invoice["status"].as_str().unwrap().to_owned()
    }

    /// The id of one of the demo's open invoices.
    async fn open_invoice(&self) -> String {
        let invoices = self.invoices().await;
        let open = invoices.iter().find(|i| i["status"] == "open").unwrap();
        open["id"].as_str().unwrap().to_owned()
    }
}

/// A task `mcp` makes of `tool`; its id.
async fn task_of(mcp: &Mcp, tool: &str, arguments: Value) -> String {
    let made = mcp.call_tool(tool, arguments, with_tasks()).await;
    let result = made.result();
    assert_eq!(result["resultType"], "task", "{}", made.raw);
    result["taskId"].as_str().unwrap().to_owned()
}

async fn get(mcp: &Mcp, id: &str) -> Answer {
    mcp.request("tasks/get", json!({"taskId": id}), with_tasks())
        .await
}

async fn update(mcp: &Mcp, id: &str, responses: Value) -> Answer {
    let params = json!({"taskId": id, "inputResponses": responses});
    mcp.request("tasks/update", params, with_tasks()).await
}

/// The task's one outstanding request, as (key, request), from a poll that may see it.
async fn asked(mcp: &Mcp, id: &str) -> (String, Value) {
    let answer = get(mcp, id).await;
    let task = answer.result();
    assert_eq!(task["status"], "input_required", "{}", answer.raw);
    let (key, request) = task["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    (key.clone(), request.clone())
}

#[tokio::test]
async fn a_task_runs_only_for_a_request_whose_token_may_run_its_tool() {
    let server = oidc_server(&SCOPES).await;
    let anna = Person::new(&server, "doors-anna").await;
    anna.connect_demo_for_writing().await;

    // void_invoice, a task made with the token that may write: its confirmation.
    let invoice = anna.open_invoice().await;
    let void = json!({"provider": "demo", "invoice_id": invoice});
    let id = task_of(&anna.writer, "void_invoice", void).await;
    let (key, _) = asked(&anna.writer, &id).await;
    let yes = json!({ &key: {"action": "accept", "content": {"confirm": true}} });
    // Answered with a token that may only read: the step-up, and the invoice stays open.
    assert_step_up(
        &update(&anna.reader, &id, yes.clone()).await,
        &server,
        WRITE,
    );
    assert_step_up(&get(&anna.reader, &id).await, &server, WRITE);
    assert_eq!(anna.status_of(&invoice).await, "open");
    assert_eq!(asked(&anna.writer, &id).await.0, key, "still waiting");
    // With the scopes, the same answer voids it.
    let taken = update(&anna.writer, &id, yes).await;
    assert_eq!(
        taken.result(),
        &json!({"resultType": "complete"}),
        "{}",
        taken.raw
    );
    let done = get(&anna.writer, &id).await;
    assert_eq!(done.result()["status"], "completed", "{}", done.raw);
    assert_eq!(anna.status_of(&invoice).await, "void");

    // create_invoice: its form answered by the reader creates nothing.
    let before = server.demo_stats().await["invoices_created"].clone();
    let id = task_of(&anna.writer, "create_invoice", json!({})).await;
    let (key, _) = asked(&anna.writer, &id).await;
    let details = json!({"email": "ap@acme.example", "customer_name": "Acme GmbH",
        "amount": "120.50", "currency": "EUR", "due_date": "2099-12-31"});
    let filled = json!({ &key: {"action": "accept", "content": details} });
    assert_step_up(
        &update(&anna.reader, &id, filled.clone()).await,
        &server,
        WRITE,
    );
    assert_eq!(server.demo_stats().await["invoices_created"], before);
    let taken = update(&anna.writer, &id, filled).await;
    assert_eq!(
        taken.result(),
        &json!({"resultType": "complete"}),
        "{}",
        taken.raw
    );
    let done = get(&anna.writer, &id).await;
    assert_eq!(done.result()["status"], "completed", "{}", done.raw);
    assert_ne!(server.demo_stats().await["invoices_created"], before);

    // A cancel runs nothing: the task's owner may always stop it.
    let id = task_of(&anna.writer, "create_invoice", json!({})).await;
    let cancelled = anna
        .bare
        .request("tasks/cancel", json!({"taskId": id}), with_tasks())
        .await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.raw);
    assert_eq!(get(&anna.writer, &id).await.result()["status"], "cancelled");
}

#[tokio::test]
async fn a_task_shows_its_result_only_to_a_token_that_may_read() {
    let server = oidc_server(&SCOPES).await;
    let bo = Person::new(&server, "doors-bo").await;
    // Made by a reader, before any account is connected: a sign-in round as a task.
    let id = task_of(&bo.reader, "list_invoices", json!({"status": "all"})).await;
    let (key, request) = asked(&bo.reader, &id).await;
    let link = request["params"]["url"].as_str().unwrap().to_owned();
    // Polled by a token without the read scope: neither stepped nor shown.
    assert_step_up(&get(&bo.bare, &id).await, &server, READ);
    let accept = json!({ &key: {"action": "accept"} });
    assert_step_up(&update(&bo.bare, &id, accept.clone()).await, &server, READ);
    assert_eq!(
        asked(&bo.reader, &id).await.0,
        key,
        "the answer was not taken"
    );
    update(&bo.reader, &id, accept).await.result();
    bo.sign_in(&link).await;
    server
        .wait_for_counter("grantry_tasks_total", &[("event", "completed")], 1.0)
        .await;
    let hidden = get(&bo.bare, &id).await;
    assert_step_up(&hidden, &server, READ);
    assert!(!hidden.raw.contains("invoices"), "{}", hidden.raw);
    let shown = get(&bo.reader, &id).await;
    let result = &shown.result()["result"];
    assert_eq!(result["isError"], false, "{}", shown.raw);
    assert!(
        !result["structuredContent"]["invoices"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_retry_runs_with_the_scopes_of_the_token_that_sends_it() {
    let server = oidc_server(&SCOPES).await;
    let cy = Person::new(&server, "doors-cy").await;
    cy.connect_demo_for_writing().await;
    let invoice = cy.open_invoice().await;
    let void = json!({"provider": "demo", "invoice_id": invoice});
    let first = cy
        .writer
        .call_tool("void_invoice", void.clone(), url_and_form())
        .await;
    let state = first.result()["requestState"].as_str().unwrap().to_owned();
    let yes = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    // The confirmation minted for the writer, sent back by the reader: refused.
    let refused = cy
        .reader
        .retry("void_invoice", void.clone(), yes.clone(), &state)
        .await;
    assert_step_up(&refused, &server, WRITE);
    assert_eq!(cy.status_of(&invoice).await, "open");
    let done = cy.writer.retry("void_invoice", void, yes, &state).await;
    assert_eq!(done.result()["isError"], false, "{}", done.raw);
    assert_eq!(cy.status_of(&invoice).await, "void");
}

#[tokio::test]
async fn a_legacy_call_runs_with_the_token_of_its_own_request() {
    let server = oidc_server(&SCOPES).await;
    let di = Person::new(&server, "doors-di").await;
    di.connect_demo_for_writing().await;
    let url = server.mcp_url();
    let reader = LegacySession::open(&url, Some(&di.reader_token), url_and_form()).await;
    let void = json!({"provider": "demo", "invoice_id": di.open_invoice().await});
    // The reader's own call is refused at its door.
    assert_step_up(
        &reader.call_tool("void_invoice", void.clone()).await,
        &server,
        WRITE,
    );

    // The writer's call, in a session the reader's token answers in: the answer is the
    // confirmation of a call the writer's request runs, and it voids.
    let writer = reader.as_seen_by(&url, Some(&di.writer_token));
    let invoice = void["invoice_id"].as_str().unwrap().to_owned();
    let (asked, done) = writer
        .call_answered_by(
            &reader,
            "void_invoice",
            void,
            |_| json!({"action": "accept", "content": {"confirm": true}}),
        )
        .await;
    assert_eq!(asked.len(), 1, "one confirmation");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(di.status_of(&invoice).await, "void");
}
