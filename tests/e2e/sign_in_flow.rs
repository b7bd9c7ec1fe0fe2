//! The whole sign-in, as a client and a person would go through it.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server};

fn accept(key: &str) -> Value {
    json!({ key: {"action": "accept"} })
}

#[tokio::test]
async fn sign_in_then_retry_returns_invoices_and_later_calls_complete_at_once() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", json!({"status": "all"}), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();

    let browser = Browser::new();
    let signed_in = browser.sign_in(&link, true).await;
    assert!(
        signed_in
            .authorize_url
            .starts_with(&format!("{}/demo/authorize?", server.base))
    );
    assert!(signed_in.callback_url.contains("/oauth/callback?"));
    signed_in.assert_connected();
    assert!(
        !signed_in.final_page.url.contains("code="),
        "the last page URL is clean"
    );

    let retry = mcp
        .retry(
            "list_invoices",
            json!({"status": "all"}),
            accept(&key),
            &state,
        )
        .await;
    assert_eq!(retry.status, StatusCode::OK, "{}", retry.raw);
    let r = retry.result();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["isError"], false);
    let invoices = r["structuredContent"]["invoices"].as_array().unwrap();
    assert_eq!(invoices.len(), 5, "the demo seeds five invoices per user");
    for invoice in invoices {
        for field in [
            "id",
            "number",
            "customer",
            "currency",
            "status",
            "issue_date",
        ] {
            assert!(invoice[field].is_string(), "{field} in {invoice}");
        }
        assert!(invoice["amount_minor"].is_i64());
        let currency = invoice["currency"].as_str().unwrap();
        assert_eq!(currency, currency.to_ascii_uppercase());
    }
    let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        text, r["structuredContent"],
        "the text block carries the same JSON"
    );

    // Later calls need no round.
    let open = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let r = open.result();
    assert_eq!(r["resultType"], "complete");
    let open_invoices = r["structuredContent"]["invoices"].as_array().unwrap();
    assert!(open_invoices.iter().all(|i| i["status"] == "open"));
    assert!(open_invoices.len() < invoices.len());
    assert_eq!(server.count_rows("grants").await, 1);

    // Nothing secret reached the log.
    let log = server.settled_log().await;
    let code = url::Url::parse(&signed_in.callback_url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    for secret in [
        code.as_str(),
        state.as_str(),
        &link[link.rfind('/').unwrap() + 1..],
    ] {
        assert!(
            !log.contains(secret),
            "a secret value reached the log: {secret}\n{log}"
        );
    }
}

#[tokio::test]
async fn a_retry_while_pending_is_held_then_asked_again_with_the_same_link() {
    let server = Server::start(&["--retry-hold", "3"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();

    let started = Instant::now();
    let retry = mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    let held = started.elapsed();
    assert!(held >= Duration::from_secs(3), "held {held:?}");
    assert!(retry.is_sse(), "a held retry answers as SSE");
    assert!(
        retry.raw.contains(": keep-alive"),
        "keep-alive comments while held"
    );
    let (again, next_state, _) = retry.sign_in_round();
    assert_eq!(again, link, "the same link is offered again");
    assert_ne!(next_state, state);
    assert_eq!(server.count_rows("grants").await, 0);
}

#[tokio::test]
async fn a_held_retry_completes_as_soon_as_the_callback_lands() {
    // No poll within the hold: only the grant-landed event can wake the retry in time.
    let server = Server::start(&["--retry-hold", "30", "--hold-poll-interval", "300"]).await;
    let mcp = std::sync::Arc::new(Mcp::new(server.mcp_url()));
    let first = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();

    let waiting = {
        let mcp = mcp.clone();
        tokio::spawn(async move {
            let answer = mcp
                .retry("list_invoices", json!({}), accept(&key), &state)
                .await;
            (answer, Instant::now())
        })
    };
    server.wait_until_holding(1).await;
    Browser::new().sign_in(&link, true).await;
    let landed = Instant::now();
    let (answer, woke) = waiting.await.unwrap();
    let latency = woke.saturating_duration_since(landed);
    assert!(
        latency < Duration::from_secs(1),
        "woke {latency:?} after the callback: by the event, not the poll or the hold"
    );
    let r = answer.result();
    assert_eq!(r["resultType"], "complete", "{}", answer.raw);
    assert!(
        !r["structuredContent"]["invoices"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn decline_and_cancel_complete_with_an_error_and_store_nothing() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    for action in ["decline", "cancel"] {
        let first = mcp
            .call_tool("list_invoices", json!({}), url_and_form())
            .await;
        let (_, state, key) = first.sign_in_round();
        let answer = mcp
            .retry(
                "list_invoices",
                json!({}),
                json!({ key: {"action": action} }),
                &state,
            )
            .await;
        let r = answer.result();
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["isError"], true);
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("not connected"), "{text}");
    }
    assert_eq!(server.count_rows("grants").await, 0);
    assert_eq!(server.count_rows("flows").await, 0);
}

#[tokio::test]
async fn a_bad_request_state_gets_one_generic_error() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", json!({"status": "open"}), url_and_form())
        .await;
    let (_, state, key) = first.sign_in_round();
    let mut flipped = state.clone().into_bytes();
    let middle = flipped.len() / 2;
    flipped[middle] = if flipped[middle] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).unwrap();
    let cases = [
        (json!({"status": "open"}), format!("{state}-TAMPERED")),
        (json!({"status": "open"}), flipped),
        (
            json!({"status": "open"}),
            state[..state.len() - 10].to_owned(),
        ),
        (
            json!({"status": "open"}),
            "g1.".to_owned() + &"A".repeat(5000),
        ),
        (json!({"status": "all"}), state.clone()),
        // The state binds what the arguments mean (`{}` is `status: open`, the same call),
        // so any other value of any argument is another request.
        (json!({"status": "open", "cursor": "c2"}), state.clone()),
        (json!({"provider": "demo"}), state.clone()),
    ];
    let mut bodies = Vec::new();
    for (arguments, bad_state) in cases {
        let a = mcp
            .retry("list_invoices", arguments, accept(&key), &bad_state)
            .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.raw);
        assert_eq!(a.error_code(), -32602);
        assert_eq!(
            a.body["error"]["message"],
            "Invalid or expired requestState"
        );
        bodies.push(a.body["error"].clone());
    }
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "no oracle: one answer for all"
    );
    // A requestState is not a sign-in ticket and the other way round.
    let (link, _, _) = mcp.first_round().await;
    let ticket = &link[link.rfind('/').unwrap() + 1..];
    let a = mcp
        .retry("list_invoices", json!({}), accept(&key), ticket)
        .await;
    assert_eq!(a.error_code(), -32602);
    let page = Browser::new()
        .get(&format!("{}/connect/{state}", server.base))
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert_eq!(server.count_rows("grants").await, 0);
}

#[tokio::test]
async fn expired_access_tokens_are_refreshed_before_use() {
    // Demo access tokens that live 30 s are inside the 60 s refresh margin at once, yet still
    // accepted by the demo API: every call refreshes exactly once, then uses the new token.
    let server = Server::start(&["--demo-token-ttl", "30"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();
    Browser::new().sign_in(&link, true).await;
    let before = server.demo_stats().await["refreshes_ok"].as_u64().unwrap();
    let retry = mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
    let after = server.demo_stats().await["refreshes_ok"].as_u64().unwrap();
    assert_eq!(after, before + 1, "one refresh before the API call");
}

#[tokio::test]
async fn a_retry_must_declare_url_elicitation_too() {
    let server = Server::start(&["--retry-hold", "1", "--no-url-elicitation", "spec"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let (_, state, key) = first.sign_in_round();
    let retry = mcp
        .request(
            "tools/call",
            json!({"name": "list_invoices", "arguments": {}, "inputResponses": accept(&key), "requestState": state}),
            json!({"elicitation": {"form": {}}}),
        )
        .await;
    assert_eq!(retry.status, StatusCode::BAD_REQUEST);
    assert_eq!(retry.error_code(), -32021);
}

#[tokio::test]
async fn a_link_about_to_expire_is_renewed_in_the_next_round() {
    let server = Server::start(&["--retry-hold", "1", "--request-state-ttl", "100"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();
    let retry = mcp
        .retry("list_invoices", json!({}), accept(&key), &state)
        .await;
    let (renewed, _, _) = retry.sign_in_round();
    assert_ne!(
        renewed, link,
        "a link with under two minutes left is replaced"
    );
    let page = Browser::new().get(&renewed).await;
    assert_eq!(page.status, StatusCode::OK);
}

#[tokio::test]
async fn a_client_without_url_elicitation_gets_the_link_as_text() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let no_elicitation = json!({});
    let first = mcp
        .call_tool("list_invoices", json!({}), no_elicitation.clone())
        .await;
    let result = first.result();
    assert_eq!(result["resultType"], "complete", "{}", first.raw);
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("then ask again"), "{text}");
    let at = text.find(&format!("{}/connect/", server.base)).unwrap();
    let link = text[at..].trim_end().to_owned();
    assert_eq!(
        server.count_rows("flows").await,
        0,
        "handing out a link writes nothing"
    );
    let signed_in = Browser::new().sign_in(&link, true).await;
    signed_in.assert_connected();
    let again = mcp
        .call_tool("list_invoices", json!({}), no_elicitation)
        .await;
    assert_eq!(again.result()["isError"], false, "{}", again.raw);
    assert!(
        !again.result()["structuredContent"]["invoices"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}
