//! `disconnect_account`: nothing is removed without an explicit `accept` with `confirm: true`;
//! a client that cannot ask gets -32021; an accepted one removes the grant here and revokes it
//! at the provider. On PostgreSQL and Redis.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::adapters::connect;
use crate::support::fake_providers::Fake;
use crate::support::mcp::url_and_form;
use crate::support::{Mcp, Server, servers};

async fn connections(mcp: &Mcp) -> Vec<String> {
    mcp.connections().await["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["provider"].as_str().unwrap().to_owned())
        .collect()
}

/// Asks to disconnect Xero and answers the confirmation with `answer`.
async fn answer_with(mcp: &Mcp, answer: Value) -> Value {
    let args = json!({"provider": "xero"});
    let first = mcp
        .call_tool("disconnect_account", args.clone(), url_and_form())
        .await;
    let round = first.result();
    assert_eq!(round["resultType"], "input_required", "{}", first.raw);
    let request = &round["inputRequests"]["confirm"];
    assert_eq!(request["params"]["mode"], "form");
    assert!(
        request["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Xero (Demo Company (UK))")
    );
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    let state = round["requestState"].as_str().unwrap();
    let retry = mcp
        .retry(
            "disconnect_account",
            args,
            json!({ "confirm": answer }),
            state,
        )
        .await;
    retry.result().clone()
}

async fn nothing_is_removed_without_a_confirmation(store: &[String]) {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog("xero")).unwrap();
    let key = grantry::seal::generate_key();
    // Replicas of one deployment: one key ring, one public URL (here replica A's).
    let mut args = servers::as_strs(store);
    args.extend(["--providers", catalog.to_str().unwrap(), "--keys", &key]);
    // The spec's answer to a client that cannot confirm (the default's is in accounts.rs).
    args.extend(["--no-url-elicitation", "spec"]);
    let a = Server::start(&args).await;
    let b = Server::start_beside(&a, &args).await;
    let mcp_a = Mcp::new(a.mcp_url());
    let mcp_b = Mcp::new(b.mcp_url());
    connect(&a, &mcp_a, "xero").await;

    // A client that cannot ask the user: -32021 naming form elicitation, nothing removed.
    let blind = mcp_a
        .call_tool(
            "disconnect_account",
            json!({"provider": "xero"}),
            json!({"elicitation": {"url": {}}}),
        )
        .await;
    assert_eq!(blind.error_code(), -32021, "{}", blind.raw);
    assert_eq!(
        blind.body["error"]["data"]["requiredCapabilities"]["elicitation"]["form"],
        json!({})
    );
    for answer in [
        json!({"action": "accept", "content": {"confirm": false}}),
        json!({"action": "accept", "content": {}}),
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
    ] {
        let result = answer_with(&mcp_a, answer.clone()).await;
        assert_eq!(result["resultType"], "complete");
        assert_eq!(
            result["content"][0]["text"], "Disconnect cancelled; nothing was removed.",
            "{answer}"
        );
        assert_eq!(connections(&mcp_b).await, ["xero"], "{answer}");
    }
    assert_eq!(fake.counters.revocations.load(Ordering::SeqCst), 0);

    // A confirmation for other arguments does not open.
    let first = mcp_a
        .call_tool(
            "disconnect_account",
            json!({"provider": "xero"}),
            url_and_form(),
        )
        .await;
    let state = first.result()["requestState"].as_str().unwrap().to_owned();
    let replay = mcp_b
        .retry(
            "disconnect_account",
            json!({"provider": "sage"}),
            json!({"confirm": {"action": "accept", "content": {"confirm": true}}}),
            &state,
        )
        .await;
    assert_eq!(replay.error_code(), -32602, "{}", replay.raw);

    // Confirmed, with the answer landing on the other replica.
    let args = json!({"provider": "xero"});
    let done = mcp_b
        .retry(
            "disconnect_account",
            args,
            json!({"confirm": {"action": "accept", "content": {"confirm": true}}}),
            &state,
        )
        .await;
    let text = done.result()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.starts_with("Disconnected Xero."), "{text}");
    assert!(connections(&mcp_a).await.is_empty());
    assert_eq!(
        fake.counters.revocations.load(Ordering::SeqCst),
        1,
        "revoked at Xero"
    );
    assert!(b.log_shows("grant.removed").await);
    // The next listing asks to connect again.
    let again = mcp_a
        .call_tool("list_invoices", json!({"provider": "xero"}), url_and_form())
        .await;
    assert_eq!(again.result()["resultType"], "input_required");
}

mod nothing_is_removed_without_a_confirmation {
    use crate::support::servers;

    #[tokio::test]
    async fn postgres() {
        let Some((args, _guard)) = servers::postgres_store().await else {
            return;
        };
        super::nothing_is_removed_without_a_confirmation(&args).await;
    }

    #[tokio::test]
    async fn redis() {
        let Some((args, _guard)) = servers::redis_store().await else {
            return;
        };
        super::nothing_is_removed_without_a_confirmation(&args).await;
    }
}
