//! The Tasks extension over raw HTTP: a call that needs a sign-in becomes a task written to
//! the store before its answer, the client polls it to `completed` on any replica, a
//! declined confirmation ends it with nothing done, and bad requests (no extension declared,
//! another person's task, an unknown id) change nothing. Clients that do not declare the
//! extension keep the rounds (`sign_in_flow.rs`, `invoice_forms.rs`).

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::mcp::{url_and_form, with_tasks};
use crate::support::person::Person;
use crate::support::{Browser, Mcp, Server};

/// `tasks/get` of `id`, as a client that declares the extension.
async fn get(mcp: &Mcp, id: &str) -> Value {
    let answer = mcp
        .request("tasks/get", json!({"taskId": id}), with_tasks())
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.raw);
    let task = answer.result().clone();
    assert_eq!(task["resultType"], "complete");
    assert_eq!(task["taskId"], id, "a poll answers for the task asked");
    task
}

async fn update(mcp: &Mcp, id: &str, responses: Value) {
    let params = json!({"taskId": id, "inputResponses": responses});
    let answer = mcp.request("tasks/update", params, with_tasks()).await;
    assert_eq!(answer.result(), &json!({"resultType": "complete"}));
}

/// The one request a task asks, as (key, request).
fn asked(task: &Value) -> (String, Value) {
    assert_eq!(task["status"], "input_required", "{task}");
    let requests = task["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{task}");
    let (key, request) = requests.iter().next().unwrap();
    (key.clone(), request.clone())
}

/// Connects the demo as a client without tasks does: the round, the sign-in, the retry.
async fn connect_demo(mcp: &Mcp) {
    let (link, state, key) = mcp.first_round().await;
    Browser::new().sign_in(&link, true).await.assert_connected();
    let accept = json!({ &key: {"action": "accept"} });
    let retry = mcp.retry("list_invoices", json!({}), accept, &state).await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
}

/// `list_invoices` from a client that takes tasks: the task it answers with.
async fn invoices_task(mcp: &Mcp) -> Value {
    let made = mcp
        .call_tool("list_invoices", json!({"status": "all"}), with_tasks())
        .await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.raw);
    made.result().clone()
}

async fn a_sign_in_runs_as_a_task_its_client_polls(store: &[String]) {
    let server = Server::start(&crate::support::servers::as_strs(store)).await;
    let mcp = Mcp::new(server.mcp_url());
    let created = invoices_task(&mcp).await;
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "input_required");
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 43, "256 random bits");
    assert!(
        created.get("inputRequests").is_none(),
        "not on CreateTaskResult"
    );
    assert_eq!(created["ttlMs"], 600_000, "as long as its link");
    assert!(created["pollIntervalMs"].as_i64().unwrap() > 0);
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));

    let waiting = get(&mcp, &id).await;
    let (key, request) = asked(&waiting);
    assert_eq!(key, "connect_demo-1");
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["mode"], "url");
    let link = request["params"]["url"].as_str().unwrap().to_owned();
    assert_eq!(
        get(&mcp, &id).await["inputRequests"],
        waiting["inputRequests"],
        "same key"
    );

    // The client accepts: the person is signing in, the task works on.
    update(&mcp, &id, json!({ &key: {"action": "accept"} })).await;
    let working = get(&mcp, &id).await;
    assert_eq!(working["status"], "working", "{working}");
    assert!(working.get("inputRequests").is_none());

    Browser::new().sign_in(&link, true).await.assert_connected();
    // The grant landing completes the task: no poll is needed for it.
    server
        .wait_for_counter("grantry_tasks_total", &[("event", "completed")], 1.0)
        .await;
    let done = get(&mcp, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["result"];
    assert_eq!(
        result["resultType"], "complete",
        "the nested result carries it"
    );
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["structuredContent"]["invoices"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert!(
        done.get("pollIntervalMs").is_none(),
        "nothing more to poll for"
    );

    // Ended for good: a cancel is acknowledged and changes nothing.
    let cancel = mcp
        .request("tasks/cancel", json!({"taskId": id}), with_tasks())
        .await;
    assert_eq!(cancel.result(), &json!({"resultType": "complete"}));
    assert_eq!(get(&mcp, &id).await["result"], done["result"]);
    assert_eq!(
        server
            .counter("grantry_tasks_total", &[("event", "created")])
            .await,
        1.0
    );
    let answered_with_a_task = [("method", "tools/call"), ("outcome", "task")];
    assert_eq!(
        server
            .counter("grantry_mcp_requests_total", &answered_with_a_task)
            .await,
        1.0
    );
    assert_eq!(
        server
            .counter("grantry_tasks_total", &[("event", "completed")])
            .await,
        1.0
    );
}
on_every_store!(a_sign_in_runs_as_a_task_its_client_polls);

#[tokio::test]
async fn a_declined_sign_in_ends_the_task_and_a_cancel_stops_one() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let id = invoices_task(&mcp).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (key, _) = asked(&get(&mcp, &id).await);
    update(
        &mcp,
        &id,
        json!({ &key: {"action": "decline"}, "never-asked": {"action": "accept"} }),
    )
    .await;
    let declined = get(&mcp, &id).await;
    assert_eq!(
        declined["status"], "completed",
        "a tool's answer, not a failure"
    );
    assert_eq!(declined["result"]["isError"], true);
    let said = declined["result"]["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("was not connected"), "{said}");

    let other = invoices_task(&mcp).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(other, id);
    let cancel = mcp
        .request("tasks/cancel", json!({"taskId": other}), with_tasks())
        .await;
    assert_eq!(cancel.result(), &json!({"resultType": "complete"}));
    let cancelled = get(&mcp, &other).await;
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled.get("inputRequests").is_none() && cancelled.get("result").is_none());
    assert_eq!(server.count_rows("tasks").await, 2);
    assert_eq!(
        server.count_rows("flows").await,
        0,
        "no sign-in was started"
    );
}

#[tokio::test]
async fn bad_task_requests_are_refused_and_change_nothing() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());

    // Without the extension: the round, as ever, and no task.
    let plain = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    assert_eq!(plain.result()["resultType"], "input_required");
    assert_eq!(server.count_rows("tasks").await, 0);

    let id = invoices_task(&mcp).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = get(&mcp, &id).await;
    let undeclared = mcp
        .request("tasks/get", json!({"taskId": id}), url_and_form())
        .await;
    assert_eq!(undeclared.status, StatusCode::BAD_REQUEST);
    assert_eq!(undeclared.error_code(), -32021);
    assert_eq!(
        undeclared.body["error"]["data"]["requiredCapabilities"],
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    );
    for (method, params) in [
        ("tasks/get", json!({"taskId": "no-such-task"})),
        ("tasks/get", json!({"taskId": "A".repeat(43)})),
        ("tasks/cancel", json!({"taskId": "A".repeat(43)})),
        ("tasks/get", json!({"taskId": 7})),
        ("tasks/update", json!({"taskId": id})),
        ("tasks/update", json!({"taskId": id, "inputResponses": []})),
    ] {
        let refused = mcp.request(method, params.clone(), with_tasks()).await;
        assert_eq!(
            refused.error_code(),
            -32602,
            "{method} {params}: {}",
            refused.raw
        );
    }
    // The routing header must name the task the body does.
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/cancel",
        "params": {"taskId": id, "_meta": crate::support::mcp::meta(with_tasks())}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", "tasks/cancel".to_owned()),
        ("mcp-name", "another-task".to_owned()),
    ];
    assert_eq!(
        mcp.raw(&headers, body.to_string()).await.error_code(),
        -32020
    );
    assert_eq!(get(&mcp, &id).await, before, "nothing changed");
}

#[tokio::test]
async fn another_persons_task_is_unknown_to_them() {
    let server = crate::oidc::oidc_server(&[]).await;
    let alices = Person::new(&server, "alice").await.mcp;
    let bobs = Person::new(&server, "bob").await.mcp;
    let id = invoices_task(&alices).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (key, _) = asked(&get(&alices, &id).await);
    for (method, params) in [
        ("tasks/get", json!({"taskId": id})),
        (
            "tasks/update",
            json!({"taskId": id, "inputResponses": { &key: {"action": "decline"} }}),
        ),
        ("tasks/cancel", json!({"taskId": id})),
    ] {
        let refused = bobs.request(method, params, with_tasks()).await;
        assert_eq!(refused.error_code(), -32602, "{method}: {}", refused.raw);
        assert_eq!(
            refused.body["error"]["message"], "Unknown task",
            "as for no task at all"
        );
    }
    let still = get(&alices, &id).await;
    assert_eq!(asked(&still).0, key, "Alice's task is as it was");
}

#[tokio::test]
async fn a_declined_confirmation_voids_nothing() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    connect_demo(&mcp).await;
    crate::adapters::grant_write_access(&mcp, "demo").await;
    let listed = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let invoice = listed.result()["structuredContent"]["invoices"][0].clone();
    let invoice_id = invoice["id"].as_str().unwrap().to_owned();
    let id = void_task(&mcp, &invoice_id).await;
    let (key, request) = asked(&get(&mcp, &id).await);
    assert_eq!(key, "confirm-1");
    assert_eq!(request["params"]["mode"], "form");
    update(&mcp, &id, json!({ &key: {"action": "decline"} })).await;
    let declined = get(&mcp, &id).await;
    assert_eq!(declined["status"], "completed", "{declined}");
    assert_eq!(
        declined["result"]["content"][0]["text"],
        "Void cancelled; nothing was changed."
    );
    assert_eq!(
        status_of(&mcp, &invoice_id).await,
        invoice["status"],
        "nothing voided"
    );

    // A yes through a task voids it, once.
    let yes = void_task(&mcp, &invoice_id).await;
    let (key, _) = asked(&get(&mcp, &yes).await);
    update(
        &mcp,
        &yes,
        json!({ &key: {"action": "accept", "content": {"confirm": true}} }),
    )
    .await;
    let voided = get(&mcp, &yes).await;
    let said = voided["result"]["content"][0]["text"].as_str().unwrap();
    assert!(said.starts_with("Voided invoice"), "{voided}");
    assert_eq!(status_of(&mcp, &invoice_id).await, "void");
}

/// `void_invoice` of the demo invoice `invoice_id`, as a task: its id.
async fn void_task(mcp: &Mcp, invoice_id: &str) -> String {
    let args = json!({"provider": "demo", "invoice_id": invoice_id});
    let made = mcp.call_tool("void_invoice", args, with_tasks()).await;
    assert_eq!(made.result()["resultType"], "task", "{}", made.raw);
    made.result()["taskId"].as_str().unwrap().to_owned()
}

/// The demo invoice's status, as `list_invoices` tells.
async fn status_of(mcp: &Mcp, invoice_id: &str) -> Value {
    let listed = mcp
        .call_tool("list_invoices", json!({"status": "all"}), url_and_form())
        .await;
    listed.result()["structuredContent"]["invoices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == invoice_id)
        .unwrap()["status"]
        .clone()
}

/// Three replicas on one store: the task made on A, A killed, a new client (knowing only the
/// task's id) polling C, the person signing in through B: completed.
async fn any_replica_serves_any_task_step(store: &[String]) {
    let (balancer, mut servers) =
        crate::replicas::replicas(&crate::support::servers::as_strs(store)).await;
    let id = invoices_task(&Mcp::new(servers[0].mcp_url())).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    servers[0].kill();
    let c = Mcp::new(servers[2].mcp_url());
    let (key, request) = asked(&get(&c, &id).await);
    let link = request["params"]["url"].as_str().unwrap();
    let b = &servers[1];
    let browser = Browser::new();
    let authorize = browser
        .continue_at(&crate::replicas::on(b, &balancer, link))
        .await;
    let callback = browser.decide_at_provider(&authorize, true).await;
    let landed = browser
        .get(&crate::replicas::on(b, &balancer, &callback))
        .await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER, "{}", landed.body);
    update(&c, &id, json!({ &key: {"action": "accept"} })).await;
    let done = get(&c, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let invoices = done["result"]["structuredContent"]["invoices"]
        .as_array()
        .unwrap();
    assert_eq!(invoices.len(), 5);
}
on_shared_stores!(any_replica_serves_any_task_step);

/// A task keeps its tool's whole answer and hands it back at every poll, however far past
/// what a client may hand back (4 096 characters) it is: here a page of 30 invoices with
/// long names, read through a task that asked which of two accounts to use.
async fn a_large_answer_opens_again_at_every_poll(store: &[String]) {
    let server = Server::start(&crate::support::servers::as_strs(store)).await;
    let mcp = Mcp::new(server.mcp_url());
    connect_demo(&mcp).await;
    crate::adapters::grant_write_access(&mcp, "demo").await;
    for n in 0..25 {
        let name = format!(
            "Customer {n:02} {}",
            "with a long registered name ".repeat(6)
        );
        let invoice = json!({"provider": "demo", "email": "ap@acme.example",
            "customer_name": name.trim_end(), "amount": 10 + n, "currency": "EUR",
            "due_date": "2099-01-31"});
        let made = mcp
            .call_tool("create_invoice", invoice, url_and_form())
            .await;
        assert_eq!(made.result()["isError"], false, "{}", made.raw);
    }
    // A second account: the call must ask which, so it becomes a task.
    let card = mcp
        .call_tool("connect_account", json!({}), url_and_form())
        .await;
    let link = card.result()["_meta"]["grantry/connect"]["url"]
        .as_str()
        .unwrap();
    Browser::new()
        .sign_in_as(link, "bob")
        .await
        .assert_connected();

    let id = invoices_task(&mcp).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (key, request) = asked(&get(&mcp, &id).await);
    let options = &request["params"]["requestedSchema"]["properties"]["account"];
    let busy = options["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|option| !option["title"].as_str().unwrap().contains("bob"))
        .unwrap_or_else(|| panic!("{request}"))["const"]
        .clone();
    update(
        &mcp,
        &id,
        json!({ &key: {"action": "accept", "content": {"account": busy}} }),
    )
    .await;
    for _ in 0..2 {
        let done = get(&mcp, &id).await;
        assert_eq!(done["status"], "completed", "{done}");
        let result = &done["result"];
        assert_eq!(result["isError"], false, "{done}");
        let invoices = result["structuredContent"]["invoices"].as_array().unwrap();
        assert_eq!(invoices.len(), 30, "five seeded, 25 made");
        assert!(done.to_string().len() > 4 * 4096, "far past a client's cap");
    }
}
on_every_store!(a_large_answer_opens_again_at_every_poll);

/// A task is kept at rest, not bound to the public URL: after the deployment moves to
/// another one, its poll still answers the task (no JSON-RPC error), and the sign-in it
/// waited on, whose link named the old URL, ends it as `failed` with that round's `-32602`.
#[tokio::test]
async fn a_task_outlives_a_new_public_url_and_says_why_it_cannot_go_on() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let id = invoices_task(&mcp).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (key, _) = asked(&get(&mcp, &id).await);
    update(&mcp, &id, json!({ &key: {"action": "accept"} })).await;
    let moved = server.base.replace("127.0.0.1", "localhost");
    let server = server.restart_adding(&["--public-url", &moved]).await;
    let mcp = Mcp::new(server.mcp_url());
    let ended = get(&mcp, &id).await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(ended["error"]["code"], -32602, "{ended}");
}
