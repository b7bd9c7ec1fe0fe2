//! The operators' commands (`grantry connections list | revoke`, `grantry users forget`) on
//! every store, against a running grantry: two people (real OpenID Connect logins, from
//! tests/oidc) each with connections at three providers (the fakes, which record each
//! revocation), a webhook receiver for the lifecycle events, and a dump of the store read
//! without grantry (support::dump) to show an erased person left nothing behind. What the
//! commands print: nothing on standard error when all went well (no store notice), a line
//! saying a list is empty, the URL a revocation that failed tried, and a reader that closed
//! the pipe early (`| head`) ends them quietly.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::adapters::connect;
use crate::support::dump::store_text;
use crate::support::fake_providers::Fake;
use crate::support::legacy;
use crate::support::oidc::provider;
use crate::support::operator::{
    into_closed_pipe, json_of, list, messages, no_notice, oidc_server, refused,
};
use crate::support::person::Person;
use crate::support::server::free_port;
use crate::support::webhooks::Receiver;
use crate::support::{Mcp, Server};
use grantry::grants::GrantKey;

const PROVIDERS: [&str; 3] = ["quickbooks", "stripe", "xero"];

/// What erasing `person` must leave nowhere in the store: their subject, and each tag the
/// store keys their rows by.
fn markers(person: &Person) -> Vec<String> {
    let principal = person.principal();
    let mut markers = vec![
        person.subject.clone(),
        principal.tag().into(),
        grantry::limits::principal_counter(&principal).0,
    ];
    for at in PROVIDERS {
        markers.push(GrantKey::sole(&principal, &at.parse().unwrap()).owner_tag());
    }
    markers
}

/// Waits (up to 10 s) until the store holds `text`, read without grantry (support::dump).
async fn until_stored(server: &Server, text: &str) {
    for _ in 0..100 {
        if store_text(server).await.contains(text) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "`{text}` never reached the store:\n{}",
        store_text(server).await
    );
}

/// The command's standard output and standard error, once it succeeded with no notice.
fn said(output: &std::process::Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}{stderr}");
    no_notice(&stderr);
    (stdout, stderr)
}

/// Asserts a command written into a pipe its reader closed ended quietly: exit 0, no panic,
/// no message.
fn ended_quietly(closed: &std::process::Output, command: &[&str]) {
    let stderr = String::from_utf8_lossy(&closed.stderr);
    assert!(
        closed.status.success(),
        "{command:?}: {:?}: {stderr}",
        closed.status
    );
    no_notice(&stderr);
    assert_eq!(
        messages(&stderr),
        Vec::<&str>::new(),
        "{command:?}: {stderr}"
    );
}

fn revoked_at(fake: &Fake) -> Vec<String> {
    let mut at = fake.counters.revoked_at.lock().unwrap().clone();
    at.sort();
    at
}

async fn operators_list_revoke_and_forget_people(store: &[String]) {
    let fake = Fake::start().await;
    let receiver = Receiver::start();
    let (server, catalog) = oidc_server(store, &fake, &receiver).await;
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
    the_output_is_quiet_and_an_empty_list_says_so(&server).await;

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
    // Her counter is in the store (what `forget` reads and removes). A count a replica still
    // holds in memory would write it again after the erasure (docs/operations.md: it lasts to
    // the end of the minute), so the replica is restarted: the one running holds none of hers.
    let counter = grantry::limits::principal_counter(&alice.principal()).0;
    until_stored(&server, &counter).await;
    let server = server.restart().await;
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
    a_failed_revocation_names_the_url_tried(&server, &fake, catalog.path(), &bob).await;
}

/// A listing, in text: every connection on standard output and nothing on standard error (no
/// notice of the store's, on any store); an empty one says so on standard error, and its JSON
/// is `[]`. Into a pipe its reader closed (`--json | head`), the command ends quietly.
async fn the_output_is_quiet_and_an_empty_list_says_so(server: &Server) {
    let (stdout, stderr) = said(&server.operator(&["connections", "list"]).await);
    assert_eq!(stdout.lines().count(), 6, "{stdout}");
    assert_eq!(
        messages(&stderr),
        Vec::<&str>::new(),
        "nothing but the list"
    );

    let none = ["connections", "list", "--state", "needs_reauth"];
    let (stdout, stderr) = said(&server.operator(&none).await);
    assert_eq!(stdout, "");
    assert_eq!(messages(&stderr), ["grantry: no connection matches"]);
    let none = json_of(&server.operator(&[&none[..], &["--json"]].concat()).await);
    assert_eq!(none, json!([]));

    let command = ["connections", "list", "--json"];
    ended_quietly(&into_closed_pipe(server, &command).await, &command);
}

/// A revocation whose provider cannot be reached: the connection is removed, and the output
/// names the revocation URL tried (without the query its entry carries, and no token).
async fn a_failed_revocation_names_the_url_tried(
    server: &Server,
    fake: &Fake,
    catalog: &std::path::Path,
    bob: &Person,
) {
    let dead = format!("http://127.0.0.1:{}", free_port());
    let providers = catalog.join("providers.toml");
    let entries = std::fs::read_to_string(&providers).unwrap();
    let entries = entries
        .replace(
            &format!("{}/stripe/oauth/revoke", fake.base),
            &format!("{dead}/stripe/oauth/revoke?audience=ops"),
        )
        .replace(
            &format!("{}/quickbooks/oauth/revoke", fake.base),
            &format!("{dead}/quickbooks/oauth/revoke?audience=ops"),
        );
    std::fs::write(&providers, entries).unwrap();
    let tokens = fake.issued_tokens();
    assert!(!tokens.is_empty(), "Bob's tokens are known");

    let revoke = [&["connections", "revoke", "--yes"][..], &bob.user_flag()].concat();
    let stripe = [&revoke[..], &["--provider", "stripe"]].concat();
    let (stdout, stderr) = said(&server.operator(&stripe).await);
    let tried = format!(
        "removed; the provider could not be reached (provider unreachable or timed out: \
         connection failed); tried {dead}/stripe/oauth/revoke\n"
    );
    assert!(stdout.ends_with(&tried), "{stdout}");
    let quickbooks = [&revoke[..], &["--provider", "quickbooks", "--json"]].concat();
    let output = server.operator(&quickbooks).await;
    let done: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(done[0]["outcome"], "removed_unreachable", "{done}");
    assert_eq!(
        done[0]["revocation_url"],
        format!("{dead}/quickbooks/oauth/revoke"),
        "{done}"
    );
    let everything = format!("{stdout}{stderr}{done}");
    assert!(!everything.contains("audience=ops"), "{everything}");
    for token in tokens {
        assert!(!everything.contains(&token), "a token in {everything}");
    }
    assert_eq!(
        list(server, &bob.user_flag()).await.len(),
        1,
        "xero is left"
    );
}

on_every_store!(operators_list_revoke_and_forget_people);

/// On a grantry with nothing in it, each list says it is empty (on standard error: standard
/// output stays the result, and `--json`'s is `[]`), and results written into a pipe whose
/// reader is gone end the command quietly, with exit 0.
#[tokio::test]
async fn empty_lists_say_so_and_a_closed_pipe_ends_quietly() {
    let (fake, receiver) = (Fake::start().await, Receiver::start());
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog("xero")).unwrap();
    let mut args = vec![
        "--providers".to_owned(),
        catalog.to_str().unwrap().to_owned(),
    ];
    args.extend(receiver.flags(&["hooks"], "1,1,1"));
    let server = Server::start(&crate::support::servers::as_strs(&args)).await;
    let empty = [
        (
            vec!["connections", "list"],
            "grantry: no connections are stored",
        ),
        (vec!["clients", "list"], "grantry: no clients are blocked"),
        (vec!["events", "list"], "grantry: no webhook deliveries"),
        (
            vec!["events", "list", "--status", "parked"],
            "grantry: no parked webhook deliveries",
        ),
    ];
    for (command, note) in empty {
        let (stdout, stderr) = said(&server.operator(&command).await);
        assert_eq!(stdout, "", "{command:?}");
        assert_eq!(messages(&stderr), [note], "{command:?}: {stderr}");
    }
    for command in [
        ["connections", "list", "--json"],
        ["clients", "list", "--json"],
    ] {
        assert_eq!(json_of(&server.operator(&command).await), json!([]));
    }

    connect(&server, &Mcp::new(server.mcp_url()), "xero").await;
    let events = server.operator(&["events", "list"]).await;
    assert!(String::from_utf8_lossy(&events.stdout).contains("connection.created"));
    for command in [
        &["connections", "list", "--json"][..],
        &["connections", "list"],
        &["clients", "list", "--json"],
        &["events", "list"],
        &["keys", "status"],
    ] {
        ended_quietly(&into_closed_pipe(&server, command).await, command);
    }
}
