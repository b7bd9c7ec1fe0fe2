//! The operators' commands (`grantry connections list | revoke`, `grantry users forget`) on
//! every store, against a running grantry: two people (real OpenID Connect logins, from
//! tests/oidc) each with connections at three providers (the fakes, which record each
//! revocation), a webhook receiver for the lifecycle events, and a dump of the store read
//! without grantry (support::dump) to show an erased person left nothing behind.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::dump::store_text;
use crate::support::fake_providers::Fake;
use crate::support::legacy;
use crate::support::oidc::provider;
use crate::support::operator::{json_of, list, oidc_server, refused};
use crate::support::person::Person;
use crate::support::webhooks::Receiver;
use grantry::grants::GrantKey;

const PROVIDERS: [&str; 3] = ["quickbooks", "stripe", "xero"];

/// What erasing `person` must leave nowhere in the store: their subject, and each tag the
/// store keys their rows by.
fn markers(person: &Person) -> Vec<String> {
    let principal = person.principal();
    let mut markers = vec![
        person.subject.clone(),
        principal.tag(),
        grantry::limits::principal_counter(&principal).0,
    ];
    for at in PROVIDERS {
        markers.push(GrantKey::sole(&principal, &at.parse().unwrap()).owner_tag());
    }
    markers
}

fn revoked_at(fake: &Fake) -> Vec<String> {
    let mut at = fake.counters.revoked_at.lock().unwrap().clone();
    at.sort();
    at
}

async fn operators_list_revoke_and_forget_people(store: &[String]) {
    let fake = Fake::start().await;
    let receiver = Receiver::start();
    let (server, _catalog) = oidc_server(store, &fake, &receiver).await;
    let (alice, bob) = (
        Person::new(&server, "alice").await,
        Person::new(&server, "bob").await,
    );
    for person in [&alice, &bob] {
        for at in PROVIDERS {
            person.connect(at).await;
        }
    }
    let session =
        legacy::initialize(&server.mcp_url(), alice.mcp.bearer.as_deref(), json!({})).await;
    assert_eq!(
        session.status,
        StatusCode::OK,
        "a legacy session of Alice's"
    );

    // Listing: everyone's, one person's, one provider's, one state's.
    assert_eq!(list(&server, &[]).await.len(), 6);
    let alices = list(&server, &alice.user_flag()).await;
    let providers: Vec<&str> = alices
        .iter()
        .map(|c| c["provider"].as_str().unwrap())
        .collect();
    assert_eq!(providers, PROVIDERS, "{alices:?}");
    assert!(
        alices
            .iter()
            .all(|c| c["subject"] == alice.subject.as_str() && c["state"] == "active")
    );
    assert_eq!(list(&server, &["--provider", "xero"]).await.len(), 2);
    assert!(list(&server, &["--state", "needs_reauth"]).await.is_empty());

    // Bad input: a clear message and exit code, and nothing changes.
    let nobody = ["--user", &provider().issuer, "nobody-at-all"];
    let revoke_nobody = [&["connections", "revoke", "--yes"][..], &nobody].concat();
    refused(
        &server.operator(&revoke_nobody).await,
        3,
        "nothing is stored for",
    );
    let forget_nobody = [&["users", "forget", "--yes"][..], &nobody].concat();
    refused(
        &server.operator(&forget_nobody).await,
        3,
        "nothing is stored for",
    );
    let unknown = [
        &["connections", "revoke", "--yes", "--provider", "nope"][..],
        &alice.user_flag(),
    ]
    .concat();
    refused(
        &server.operator(&unknown).await,
        2,
        "no provider `nope` is configured",
    );
    refused(
        &server
            .operator(&["connections", "list", "--provider", "nope"])
            .await,
        2,
        "no provider `nope`",
    );
    let unconfirmed = [&["connections", "revoke"][..], &alice.user_flag()].concat();
    refused(&server.operator(&unconfirmed).await, 2, "pass --yes");
    let unconfirmed = [&["users", "forget"][..], &alice.user_flag()].concat();
    refused(&server.operator(&unconfirmed).await, 2, "pass --yes");
    assert_eq!(list(&server, &[]).await.len(), 6, "nothing removed");
    assert!(revoked_at(&fake).is_empty(), "nothing revoked");

    // Revoking one connection: revoked at the provider, its event sent, the rest untouched.
    let one = [
        &[
            "connections",
            "revoke",
            "--yes",
            "--json",
            "--provider",
            "xero",
        ][..],
        &alice.user_flag(),
    ]
    .concat();
    let done = json_of(&server.operator(&one).await);
    assert_eq!(done.as_array().unwrap().len(), 1, "{done}");
    assert_eq!(done[0]["outcome"], "revoked", "{done}");
    assert_eq!(done[0]["connection"]["provider"], "xero");
    assert_eq!(revoked_at(&fake), ["xero"]);
    assert_eq!(list(&server, &alice.user_flag()).await.len(), 2);
    assert_eq!(list(&server, &bob.user_flag()).await.len(), 3);
    assert!(
        !alice.lists_invoices_at("xero").await,
        "Alice is asked to connect again"
    );
    assert!(
        bob.lists_invoices_at("xero").await,
        "Bob's Xero still works"
    );
    let events = receiver.wait_for(7, Duration::from_secs(20)).await;
    let ended: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "connection.disconnected")
        .collect();
    assert_eq!(ended.len(), 1, "{events:?}");
    assert_eq!(ended[0]["data"]["reason"], "revoked by an operator");
    assert_eq!(ended[0]["data"]["principal"]["sub"], alice.subject.as_str());
    assert_eq!(
        ended[0]["connection_id"],
        done[0]["connection"]["connection_id"]
    );

    // Forgetting Alice: her other two revoked, everything of hers gone, Bob untouched.
    assert!(
        alice.mcp.connections().await["connections"].is_array(),
        "a counted request"
    );
    tokio::time::sleep(grantry::limits::FLUSH_EVERY * 3).await;
    let forget = [
        &["users", "forget", "--yes", "--json"][..],
        &alice.user_flag(),
    ]
    .concat();
    let forgotten = json_of(&server.operator(&forget).await);
    let outcomes: Vec<&Value> = forgotten["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["outcome"])
        .collect();
    assert_eq!(
        outcomes,
        [&json!("revoked"), &json!("revoked")],
        "{forgotten}"
    );
    assert_eq!(revoked_at(&fake), PROVIDERS, "each of her three, once");
    assert!(
        forgotten["sign_in_attempts"].as_u64().unwrap() >= 3,
        "{forgotten}"
    );
    assert_eq!(forgotten["legacy_sessions"], 1, "{forgotten}");
    assert!(
        forgotten["rate_counters"].as_u64().unwrap() >= 1,
        "{forgotten}"
    );
    assert!(
        forgotten["webhook_deliveries"].as_u64().unwrap() >= 4,
        "{forgotten}"
    );
    refused(
        &server
            .operator(&[&["users", "forget", "--yes"][..], &alice.user_flag()].concat())
            .await,
        3,
        "nothing is stored for",
    );
    assert!(list(&server, &alice.user_flag()).await.is_empty());
    assert_eq!(list(&server, &bob.user_flag()).await.len(), 3);
    assert!(
        bob.lists_invoices_at("stripe").await,
        "Bob's connections still work"
    );

    let dump = store_text(&server).await;
    assert!(
        dump.contains(&bob.subject),
        "the dump reads the store: {dump}"
    );
    for marker in markers(&alice) {
        assert!(
            !dump.contains(&marker),
            "`{marker}` is still in the store:\n{dump}"
        );
    }
}

on_every_store!(operators_list_revoke_and_forget_people);
