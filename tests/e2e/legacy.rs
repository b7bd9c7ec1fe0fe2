//! The legacy era (2025-11-25) on the same endpoint: `initialize` opens a session, a missing
//! connection is `-32042` with the connect link, the session hears
//! `notifications/elicitation/complete` when the sign-in lands, the retry completes, form
//! rounds are asked with `elicitation/create`, and a session serves only its opener, on any
//! replica.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::legacy::{LEGACY, LegacySession, initialize, initialize_with};
use crate::support::mcp::url_and_form;
use crate::support::oidc::{access_token, provider, user};
use crate::support::{Browser, Mcp, Server, servers};

/// A `-32042` answer's one URL elicitation.
fn url_elicitation(answer: &crate::support::mcp::Answer) -> Value {
    assert_eq!(answer.error_code(), -32042, "{}", answer.raw);
    let elicitations = answer.body["error"]["data"]["elicitations"]
        .as_array()
        .expect("data.elicitations");
    assert_eq!(elicitations.len(), 1);
    let url = elicitations[0]["url"].as_str().unwrap_or_default();
    crate::support::leaks::record("connect link", [url]);
    elicitations[0].clone()
}

/// Connects the demo account through a legacy session; the elicitation it answered.
async fn connect(session: &LegacySession, server: &Server) -> Value {
    let elicitation = url_elicitation(&session.call_tool("list_invoices", json!({})).await);
    let url = elicitation["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/connect/", server.base)),
        "{url}"
    );
    let signed_in = Browser::new().sign_in(url, true).await;
    signed_in.assert_connected();
    elicitation
}

#[tokio::test]
async fn a_legacy_session_signs_in_through_32042_hears_completion_and_the_retry_completes() {
    let server = Server::start(&[]).await;
    let session = LegacySession::open(&server.mcp_url(), None, url_and_form()).await;
    let init = session.initialized.body["result"].clone();
    assert_eq!(init["protocolVersion"], LEGACY, "{init}");
    assert_eq!(init["serverInfo"]["name"], "grantry");
    assert!(init["capabilities"]["tools"].is_object());

    let tools = session.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"list_invoices"), "{names:?}");

    let listening = session
        .listen_for(
            "notifications/elicitation/complete",
            Duration::from_secs(20),
        )
        .await;
    let first = session.call_tool("list_invoices", json!({})).await;
    let elicitation = url_elicitation(&first);
    assert_eq!(elicitation["mode"], "url");
    let elicitation_id = elicitation["elicitationId"].as_str().unwrap().to_owned();
    assert!(!elicitation_id.is_empty());
    assert!(elicitation["message"].as_str().unwrap().contains("Connect"));
    let url = elicitation["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/connect/", server.base)),
        "{url}"
    );
    assert_eq!(server.count_rows("grants").await, 0);

    let signed_in = Browser::new().sign_in(url, true).await;
    signed_in.assert_connected();
    let notice = listening
        .await
        .unwrap()
        .expect("elicitation/complete arrives");
    assert_eq!(notice["params"]["elicitationId"], elicitation_id.as_str());

    let retry = session
        .call_tool("list_invoices", json!({"status": "all"}))
        .await;
    let result = retry.result();
    assert_eq!(result["isError"], false, "{}", retry.raw);
    assert_eq!(
        result["structuredContent"]["invoices"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert!(
        result.get("resultType").is_none(),
        "legacy results carry no resultType: {result}"
    );

    assert_eq!(session.delete().await, StatusCode::NO_CONTENT);
    let after = session.request("tools/list", json!({})).await;
    assert_eq!(after.status, StatusCode::NOT_FOUND, "{}", after.raw);
}

#[tokio::test]
async fn legacy_confirmation_asks_with_elicitation_create_and_a_no_destroys_nothing() {
    let server = Server::start(&[]).await;
    let session = LegacySession::open(&server.mcp_url(), None, url_and_form()).await;
    connect(&session, &server).await;
    let connections = || async {
        session
            .call_tool("list_connections", json!({}))
            .await
            .result()["structuredContent"]["connections"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(connections().await, 1);

    let args = json!({"provider": "demo"});
    let (asked, answer) = session
        .call_answering(
            "disconnect_account",
            args.clone(),
            |_| json!({"action": "decline"}),
        )
        .await;
    assert_eq!(asked.len(), 1, "one question: {asked:?}");
    assert_eq!(asked[0]["mode"], "form");
    assert!(asked[0]["requestedSchema"]["properties"]["confirm"].is_object());
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("nothing was removed"), "{answer}");
    assert_eq!(connections().await, 1, "declined: still connected");

    let (_, answer) = session
        .call_answering(
            "disconnect_account",
            args.clone(),
            |_| json!({"action": "accept", "content": {"confirm": false}}),
        )
        .await;
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("nothing was removed"), "{answer}");
    assert_eq!(connections().await, 1, "confirm: false is a no");

    let (_, answer) = session
        .call_answering(
            "disconnect_account",
            args,
            |_| json!({"action": "accept", "content": {"confirm": true}}),
        )
        .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(connections().await, 0, "confirmed: disconnected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_question_times_out_and_one_question_at_a_time_per_session() {
    let server = Server::start(&["--elicitation-timeout", "3"]).await;
    let session =
        std::sync::Arc::new(LegacySession::open(&server.mcp_url(), None, url_and_form()).await);
    connect(&session, &server).await;
    let args = json!({"provider": "demo"});

    // The first call's question stays unanswered; meanwhile a second call in the session
    // may not ask one of its own.
    let first = {
        let (session, args) = (session.clone(), args.clone());
        tokio::spawn(async move {
            session
                .call_maybe_answering("disconnect_account", args, |_| None)
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (asked, second) = session
        .call_answering(
            "disconnect_account",
            args,
            |_| json!({"action": "accept", "content": {"confirm": true}}),
        )
        .await;
    assert!(asked.is_empty(), "the second call asked nothing: {asked:?}");
    let text = second["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Another question is waiting"), "{second}");
    assert!(text.contains("Nothing was changed"), "{second}");

    let (asked, first) = first.await.unwrap();
    assert_eq!(asked.len(), 1);
    let text = first["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("No answer came within 3 seconds"), "{first}");
    let connections = session.call_tool("list_connections", json!({})).await;
    assert_eq!(
        connections.result()["structuredContent"]["connections"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "unanswered and refused: still connected"
    );
}

#[tokio::test]
async fn past_max_legacy_sessions_an_idle_one_makes_room_and_only_all_in_use_gets_503() {
    let server = Server::start(&["--max-legacy-sessions", "2", "--retry-hold", "4"]).await;
    let first = LegacySession::open(&server.mcp_url(), None, url_and_form()).await;
    let second = LegacySession::open(&server.mcp_url(), None, url_and_form()).await;
    // The oldest idle session leaves memory to make room; it stays in the store ...
    let third = LegacySession::open(&server.mcp_url(), None, url_and_form()).await;
    assert_eq!(server.count_rows("mcp_sessions").await, 3);
    // ... and comes back when used (the idle `second` makes room for it).
    assert!(
        first
            .request("tools/list", json!({}))
            .await
            .status
            .is_success()
    );
    // With both sessions in memory in use, a new one is refused, and nothing is opened.
    let first_stream = first
        .listen_for("notifications/none", Duration::from_secs(60))
        .await;
    let _third_stream = third
        .listen_for("notifications/none", Duration::from_secs(60))
        .await;
    let refused = initialize(&server.mcp_url(), None, url_and_form()).await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.raw
    );
    assert_eq!(refused.headers["retry-after"], "60");
    assert!(refused.headers.get("mcp-session-id").is_none());
    assert_eq!(server.count_rows("mcp_sessions").await, 3);
    let modern = Mcp::new(server.mcp_url())
        .request("tools/list", json!({}), json!({}))
        .await;
    assert_eq!(
        modern.status,
        StatusCode::OK,
        "the modern era opens no session"
    );
    // A stream that ends frees its session (grantry notices at its next keep-alive).
    first_stream.abort();
    let started = std::time::Instant::now();
    loop {
        let again = initialize(&server.mcp_url(), None, url_and_form()).await;
        if again.status == StatusCode::OK {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{}", again.raw);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(second.delete().await, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn a_client_without_url_elicitation_gets_a_link_to_open_or_with_the_option_32021() {
    let spec = Server::start(&["--no-url-elicitation", "spec"]).await;
    let session = LegacySession::open(&spec.mcp_url(), None, json!({})).await;
    let answer = session.call_tool("list_invoices", json!({})).await;
    assert_eq!(answer.error_code(), -32021, "{}", answer.raw);

    let link = Server::start(&[]).await;
    let session = LegacySession::open(&link.mcp_url(), None, json!({"elicitation": {}})).await;
    let answer = session.call_tool("list_invoices", json!({})).await;
    let result = answer.result();
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("{}/connect/", link.base)),
        "the text carries the link: {text}"
    );
}

#[tokio::test]
async fn a_session_serves_only_its_opener() {
    let server = crate::oidc::oidc_server(&[]).await;
    let p = provider();
    let alice = access_token(&p.issuer, &user("alice"), &server.mcp_url(), "test-client").await;
    let bob = access_token(&p.issuer, &user("bob"), &server.mcp_url(), "test-client").await;
    let session = LegacySession::open(&server.mcp_url(), Some(&alice), url_and_form()).await;

    let stolen = session.as_seen_by(&server.mcp_url(), Some(&bob));
    let answer = stolen.request("tools/list", json!({})).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.raw);
    assert_eq!(stolen.delete().await, StatusCode::NOT_FOUND);

    let answer = session.request("tools/list", json!({})).await;
    assert_eq!(answer.status, StatusCode::OK, "the opener still uses it");
}

#[tokio::test]
async fn initialize_with_an_older_version_gets_the_legacy_version_and_modern_errors_name_both() {
    let server = Server::start(&[]).await;
    let params = json!({"protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}});
    let old = initialize_with(&server.mcp_url(), None, params).await;
    assert_eq!(old.status, StatusCode::OK);
    assert_eq!(old.body["result"]["protocolVersion"], LEGACY, "{}", old.raw);

    // An `initialize` under a version header grantry does not know: -32022 naming both.
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {
        "protocolVersion": "1900-01-01", "capabilities": {},
        "clientInfo": {"name": "future", "version": "1"}}});
    let mcp = Mcp::new(server.mcp_url());
    let future = mcp
        .raw(
            &[("mcp-protocol-version", "1900-01-01".into())],
            body.to_string(),
        )
        .await;
    assert_eq!(future.status, StatusCode::BAD_REQUEST, "{}", future.raw);
    assert_eq!(future.error_code(), -32022);
    assert_eq!(future.body["id"], 7);
    assert_eq!(
        future.body["error"]["data"],
        json!({"supported": ["2026-07-28", LEGACY], "requested": "1900-01-01"})
    );

    // An `initialize` under the modern version header still opens a (legacy) session, and
    // it is recorded for its opener: the opener can end it.
    let body = json!({"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {
        "protocolVersion": "2026-07-28", "capabilities": {},
        "clientInfo": {"name": "eager", "version": "1"}}});
    let eager = mcp
        .raw(
            &[("mcp-protocol-version", "2026-07-28".into())],
            body.to_string(),
        )
        .await;
    assert_eq!(eager.status, StatusCode::OK, "{}", eager.raw);
    assert_eq!(eager.body["result"]["protocolVersion"], LEGACY);
    let id = eager.headers["mcp-session-id"].to_str().unwrap();
    let ended = reqwest::Client::new()
        .delete(server.mcp_url())
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", LEGACY)
        .send()
        .await
        .unwrap();
    assert_eq!(
        ended.status(),
        StatusCode::NO_CONTENT,
        "recorded for its opener"
    );

    let unknown = mcp
        .raw(
            &[
                ("mcp-protocol-version", "1900-01-01".into()),
                ("mcp-method", "tools/list".into()),
            ],
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "1900-01-01",
                "io.modelcontextprotocol/clientCapabilities": {},
            }}})
            .to_string(),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.raw);
    assert_eq!(unknown.error_code(), -32022);
    let supported = &unknown.body["error"]["data"]["supported"];
    assert!(
        supported
            .as_array()
            .is_some_and(|s| s.contains(&json!("2026-07-28")) && s.contains(&json!(LEGACY))),
        "{supported}"
    );
}

/// A session opened on one replica serves its requests on another (restored from the store).
async fn a_session_moves_between_replicas(store_args: &[&str]) {
    let key = grantry::seal::generate_key();
    let mut args = vec!["--keys", key.as_str()];
    args.extend_from_slice(store_args);
    let a = Server::start(&args).await;
    let b = Server::start_beside(&a, &args).await;
    let on_a = LegacySession::open(&a.mcp_url(), None, url_and_form()).await;
    let on_b = on_a.as_seen_by(&b.mcp_url(), None);
    let tools = on_b.request("tools/list", json!({})).await;
    assert_eq!(tools.status, StatusCode::OK, "{}", tools.raw);
    assert!(tools.result()["tools"].is_array());
    let first = on_b.call_tool("list_invoices", json!({})).await;
    assert_eq!(url_elicitation(&first)["mode"], "url");
    assert_eq!(on_b.delete().await, StatusCode::NO_CONTENT);
    let gone = on_a.request("tools/list", json!({})).await;
    assert_eq!(
        gone.status,
        StatusCode::NOT_FOUND,
        "ended everywhere: {}",
        gone.raw
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_session_moves_between_replicas() {
    let Some((args, _database)) = servers::postgres_store().await else {
        return;
    };
    a_session_moves_between_replicas(&servers::as_strs(&args)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_a_session_moves_between_replicas() {
    let Some((args, _prefix)) = servers::redis_store().await else {
        return;
    };
    a_session_moves_between_replicas(&servers::as_strs(&args)).await;
}

#[tokio::test]
async fn an_unreadable_or_oversized_initialize_opens_no_session() {
    let server = Server::start(&[]).await;
    let answer = initialize(&server.mcp_url(), None, json!("not an object")).await;
    assert!(
        answer.headers.get("mcp-session-id").is_none(),
        "{} {}",
        answer.status,
        answer.raw
    );
    assert_eq!(server.count_rows("mcp_sessions").await, 0);

    let huge = json!({"name": "x".repeat(20_000), "version": "1"});
    let params = json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": huge});
    let answer = initialize_with(&server.mcp_url(), None, params).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.raw);
    assert!(answer.headers.get("mcp-session-id").is_none());
    assert_eq!(server.count_rows("mcp_sessions").await, 0);
}
