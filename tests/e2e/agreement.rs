//! Replicas of one store agree, or say at start that they do not: a shared store needs its
//! key ring given; a replica serving another public URL, or sealing with keys the live
//! replicas cannot open (or opening with keys that miss theirs), is refused naming the
//! setting; a key rotation in two steps passes. At run time, a value this replica cannot
//! open is named as what it is (not a store outage), and `/readyz` says so.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::StatusCode;
use serde_json::json;
use sqlx::Connection;

use crate::support::server::{exit_of, refusal};
use crate::support::{Browser, Mcp, Server, servers};

fn key_id(key: &str) -> String {
    grantry::seal::KeyRing::from_encoded(&[key])
        .unwrap()
        .current_key_id()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

async fn a_shared_store_needs_its_keys_given(store: &[String]) {
    let data = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_grantry"));
    command
        .args(store)
        .arg("--data-dir")
        .arg(data.path())
        .args(["--listen", "127.0.0.1:0"])
        .env_remove("GRANTRY_KEYS");
    let out = exit_of(&mut command);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("--keys (GRANTRY_KEYS) is required"), "{said}");
    assert!(said.contains("grantry keys generate"), "{said}");
    assert!(
        !data.path().join("sealing.key").exists(),
        "no key of its own made"
    );
}
on_shared_stores!(a_shared_store_needs_its_keys_given);

async fn a_replica_that_disagrees_is_refused_naming_the_setting(store: &[String]) {
    let (k1, k2) = (grantry::seal::generate_key(), grantry::seal::generate_key());
    let store = servers::as_strs(store);
    let with = |keys: &str, url: &str| -> Vec<String> {
        let mut args: Vec<String> = store.iter().map(|a| a.to_string()).collect();
        args.extend([
            "--keys".into(),
            keys.into(),
            "--public-url".into(),
            url.into(),
        ]);
        args
    };
    let refused = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = refusal(&args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        stderr(&out)
    };
    // A serves its own address, the default public URL.
    let mut a_args = store.clone();
    a_args.extend(["--keys", &k1]);
    let mut a = Server::start(&a_args).await;
    assert!(
        a.log()
            .contains(&format!("listen={}", a.base.trim_start_matches("http://"))),
        "each replica logs its own listen address:\n{}",
        a.log()
    );

    let said = refused(with(&k2, &a.base));
    assert!(said.contains("--keys (GRANTRY_KEYS)"), "{said}");
    assert!(said.contains(&key_id(&k1)), "names A's key: {said}");

    let said = refused(with(&k1, "http://127.0.0.1:9"));
    assert!(said.contains("--public-url (GRANTRY_PUBLIC_URL)"), "{said}");
    assert!(said.contains(&a.base), "names A's URL: {said}");

    // A rotation: the new key second everywhere first; sealing with it while A cannot open
    // it is refused; once A has gone, it passes.
    let second = format!("{k1},{k2}");
    let b = Server::start(&servers::as_strs(&with(&second, &a.base))).await;
    let moved = format!("{k2},{k1}");
    let said = refused(with(&moved, &a.base));
    assert!(
        said.contains("add the new key after the current one"),
        "{said}"
    );
    assert!(a.terminate().success(), "A stops cleanly and leaves");
    let c = Server::start(&servers::as_strs(&with(&moved, &a.base))).await;
    let tools = Mcp::new(c.mcp_url())
        .request("tools/list", json!({}), json!({}))
        .await;
    assert_eq!(tools.status, StatusCode::OK, "{}", tools.raw);
    drop(b);
}
on_shared_stores!(a_replica_that_disagrees_is_refused_naming_the_setting);

/// A grant whose sealed tokens name a key this replica lacks: the call is told the keys
/// differ, not that the store is down. While no live replica holds that key (one every
/// replica retired) this replica stays ready: taking it out would take all out. Once a live
/// replica that started first seals with it, this one disagrees with it, and `/readyz` says
/// so, naming the setting and the key, within a refresh.
#[tokio::test]
async fn a_value_under_a_key_this_replica_lacks_is_named_and_a_peer_holding_it_unreadies_it() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, state, key) = mcp.first_round().await;
    Browser::new().sign_in(&link, true).await.assert_connected();
    let accept = json!({ &key: {"action": "accept"} });
    let done = mcp.retry("list_invoices", json!({}), accept, &state).await;
    assert_eq!(done.result()["isError"], false, "{}", done.raw);

    let path = server.data_dir.path().join("grantry.db");
    let mut db = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let sealed: String = sqlx::query_scalar("SELECT tokens_sealed FROM grants")
        .fetch_one(&mut db)
        .await
        .unwrap();
    let mut raw = URL_SAFE_NO_PAD
        .decode(sealed.strip_prefix("g1.").unwrap())
        .unwrap();
    raw[..4].copy_from_slice(&[0xff; 4]);
    let elsewhere = format!("g1.{}", URL_SAFE_NO_PAD.encode(&raw));
    sqlx::query("UPDATE grants SET tokens_sealed = $1")
        .bind(&elsewhere)
        .execute(&mut db)
        .await
        .unwrap();

    let failed = mcp.call_tool("list_invoices", json!({}), json!({})).await;
    let error = &failed.body["error"];
    assert_eq!(error["code"], -32603, "{}", failed.raw);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("sealing keys differ"), "{message}");
    assert!(!message.contains("unavailable"), "not an outage: {message}");
    assert_eq!(error["data"]["retryable"], false);
    assert!(
        server.log().contains("sealed under key ffffffff"),
        "the log names it"
    );
    assert_eq!(
        readyz(&server).await.0,
        StatusCode::OK,
        "no replica holds it"
    );

    // A replica that started first and seals with that key.
    let now = grantry_base::clock::unix_now_millis();
    let peer = json!({"id": "peer", "host": "elsewhere", "listen": "10.0.0.9:8080",
        "public_url": server.base, "sealing_key": "ffffffff", "key_ids": ["ffffffff"],
        "started_at_ms": 0, "seen_at_ms": now + 60_000});
    sqlx::query("INSERT INTO replicas (id, record, seen_at) VALUES ('peer', $1, $2)")
        .bind(peer.to_string())
        .bind(now + 60_000)
        .execute(&mut db)
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(25);
    let (status, said) = loop {
        let (status, said) = readyz(&server).await;
        if status != StatusCode::OK || std::time::Instant::now() > deadline {
            break (status, said);
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{said}");
    assert!(said.contains("--keys (GRANTRY_KEYS)"), "{said}");
    assert!(said.contains("ffffffff"), "{said}");
}

async fn readyz(server: &Server) -> (StatusCode, String) {
    let answer = reqwest::get(format!("{}/readyz", server.base))
        .await
        .unwrap();
    (answer.status(), answer.text().await.unwrap())
}
