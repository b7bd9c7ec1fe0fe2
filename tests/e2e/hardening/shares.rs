//! One principal against the per-process pools, within her own request limit: legacy-era
//! sessions in memory and in the store, retries held open and GET streams. Each principal
//! has a share; the others are served.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::oidc::oidc_server;
use crate::support::legacy::{LegacySession, initialize, initialize_with};
use crate::support::mcp::url_and_form;
use crate::support::oidc::{access_token, provider, user};
use crate::support::{Mcp, Server};

async fn token_for(server: &Server, name: &str) -> String {
    access_token(
        &provider().issuer,
        &user(name),
        &server.mcp_url(),
        "test-client",
    )
    .await
}

#[tokio::test]
async fn one_principals_flood_of_legacy_sessions_leaves_anothers_initialize_served() {
    let server = oidc_server(&[
        "--max-legacy-sessions",
        "12",
        "--max-legacy-sessions-per-principal",
        "4",
    ])
    .await;
    let mallory = token_for(&server, "mallory").await;
    let bob = token_for(&server, "bob").await;
    // Far more sessions than the cap: each of hers past her share pushes out her own oldest.
    for _ in 0..30 {
        let opened = initialize(&server.mcp_url(), Some(&mallory), url_and_form()).await;
        assert_eq!(opened.status, StatusCode::OK, "{}", opened.raw);
    }
    let bobs = LegacySession::open(&server.mcp_url(), Some(&bob), url_and_form()).await;
    assert!(
        bobs.request("tools/list", json!({}))
            .await
            .status
            .is_success()
    );
    // Her sessions are kept in the store: her oldest comes back when she uses it.
    assert_eq!(server.count_rows("mcp_sessions").await, 31);
}

#[tokio::test]
async fn a_session_kept_in_the_store_comes_back_to_its_owner_whatever_the_load() {
    let server = oidc_server(&[
        "--max-legacy-sessions",
        "6",
        "--max-legacy-sessions-per-principal",
        "3",
        "--retry-hold",
        "4",
    ])
    .await;
    let mallory = token_for(&server, "mallory").await;
    let bob = token_for(&server, "bob").await;
    let carol = token_for(&server, "carol").await;
    let bobs = LegacySession::open(&server.mcp_url(), Some(&bob), url_and_form()).await;
    // Mallory and Carol fill every other place, and keep theirs in use.
    let mut streams = Vec::new();
    for token in [&mallory, &mallory, &mallory, &carol, &carol] {
        let session = LegacySession::open(&server.mcp_url(), Some(token), url_and_form()).await;
        streams.push(
            session
                .listen_for("notifications/none", Duration::from_secs(30))
                .await,
        );
    }
    // Bob's idle session is the only one that can make room: Carol's next one takes it.
    let carols = initialize(&server.mcp_url(), Some(&carol), url_and_form()).await;
    assert_eq!(carols.status, StatusCode::OK, "{}", carols.raw);
    // Back in use, Bob's session is restored from the store; Carol's idle one makes room.
    let back = bobs.request("tools/list", json!({})).await;
    assert_eq!(back.status, StatusCode::OK, "{}", back.raw);
    // With every session in use, a newcomer waits: 503 and Retry-After, nothing opened.
    let _bob_listening = bobs
        .listen_for("notifications/none", Duration::from_secs(30))
        .await;
    let dave = token_for(&server, "dave").await;
    let refused = initialize(&server.mcp_url(), Some(&dave), url_and_form()).await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.raw
    );
    assert_eq!(refused.headers["retry-after"], "60");
    assert!(refused.headers.get("mcp-session-id").is_none());
    for stream in streams {
        stream.abort();
    }
}

#[tokio::test]
async fn one_principals_held_retries_never_turn_anothers_into_immediate_re_asks() {
    let server = oidc_server(&[
        "--max-held-retries",
        "4",
        "--max-held-retries-per-principal",
        "2",
        "--retry-hold",
        "4",
    ])
    .await;
    let mallory = Arc::new(Mcp::with_bearer(
        server.mcp_url(),
        token_for(&server, "mallory").await,
    ));
    let bob = Arc::new(Mcp::with_bearer(
        server.mcp_url(),
        token_for(&server, "bob").await,
    ));
    let (_, state, key) = mallory.first_round().await;
    let hers: Vec<_> = (0..4)
        .map(|_| mallory.held_retry(key.clone(), state.clone()))
        .collect();
    // Her share is held; the two past it were answered at once.
    server.wait_until_holding(2).await;
    let (_, state, key) = bob.first_round().await;
    let started = Instant::now();
    let answer = bob.held_retry(key, state).await.unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(3),
        "Bob's retry was held, not asked again at once: {waited:?}"
    );
    assert_eq!(answer.result()["resultType"], "input_required");
    let mut answered_at_once = 0;
    for retry in hers {
        if !retry.await.unwrap().is_sse() {
            answered_at_once += 1;
        }
    }
    assert_eq!(answered_at_once, 2, "two of hers past her share");
}

#[tokio::test]
async fn past_the_held_retry_cap_a_retry_is_asked_again_at_once() {
    let server = oidc_server(&[
        "--max-held-retries",
        "2",
        "--max-held-retries-per-principal",
        "2",
        "--retry-hold",
        "5",
    ])
    .await;
    let alice = Arc::new(Mcp::with_bearer(
        server.mcp_url(),
        token_for(&server, "alice").await,
    ));
    let bob = Arc::new(Mcp::with_bearer(
        server.mcp_url(),
        token_for(&server, "bob").await,
    ));
    let (_, state, key) = alice.first_round().await;
    let hers: Vec<_> = (0..2)
        .map(|_| alice.held_retry(key.clone(), state.clone()))
        .collect();
    server.wait_until_holding(2).await;
    // Bob's share is untouched, but the process holds all it may: asked again at once.
    let (link, state, key) = bob.first_round().await;
    let started = Instant::now();
    let answer = bob.held_retry(key, state).await.unwrap();
    assert!(!answer.is_sse(), "not held");
    assert!(started.elapsed() < Duration::from_secs(2));
    let (again, _, _) = answer.sign_in_round();
    assert_eq!(again, link, "the same link, asked again");
    assert!(server.log_shows("too many held retries").await);
    assert!(
        server.log_shows("cap=Total").await,
        "the total cap, not a share"
    );
    for retry in hers {
        assert!(retry.await.unwrap().is_sse(), "hers were held");
    }
}

#[tokio::test]
async fn get_streams_are_two_a_session_and_count_in_the_principals_share() {
    let server = oidc_server(&[
        "--max-held-retries-per-principal",
        "3",
        // Keep-alives every second: a closed stream is noticed at once.
        "--retry-hold",
        "4",
    ])
    .await;
    let mallory = token_for(&server, "mallory").await;
    let first = LegacySession::open(&server.mcp_url(), Some(&mallory), url_and_form()).await;
    let second = LegacySession::open(&server.mcp_url(), Some(&mallory), url_and_form()).await;
    let mut open = Vec::new();
    for _ in 0..2 {
        let stream = first.get_stream().await;
        assert_eq!(stream.status(), StatusCode::OK);
        open.push(stream);
    }
    let third = first.get_stream().await;
    assert_eq!(
        third.status(),
        StatusCode::CONFLICT,
        "a third on one session"
    );
    let stream = second.get_stream().await;
    assert_eq!(stream.status(), StatusCode::OK);
    open.push(stream);
    // Her share (3) is spent across her sessions: a fourth anywhere is refused.
    let past_share = second.get_stream().await;
    assert_eq!(past_share.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(past_share.headers()["retry-after"], "60");
    // Nobody else is affected.
    let bob = token_for(&server, "bob").await;
    let bobs = LegacySession::open(&server.mcp_url(), Some(&bob), url_and_form()).await;
    assert_eq!(bobs.get_stream().await.status(), StatusCode::OK);
    // A stream she closes gives its place back.
    drop(open.pop());
    let mut reopened = None;
    for _ in 0..100 {
        let stream = second.get_stream().await;
        if stream.status() == StatusCode::OK {
            reopened = Some(stream);
            break;
        }
        assert_eq!(stream.status(), StatusCode::TOO_MANY_REQUESTS);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(reopened.is_some(), "the closed stream's place came back");
}

#[tokio::test]
async fn a_principal_keeps_so_many_sessions_in_the_store_and_the_oldest_is_forgotten() {
    let server = oidc_server(&["--max-stored-legacy-sessions-per-principal", "3"]).await;
    let mallory = token_for(&server, "mallory").await;
    let bob = token_for(&server, "bob").await;
    let bobs = LegacySession::open(&server.mcp_url(), Some(&bob), url_and_form()).await;
    let oldest = LegacySession::open(&server.mcp_url(), Some(&mallory), url_and_form()).await;
    for _ in 0..20 {
        let opened = initialize(&server.mcp_url(), Some(&mallory), url_and_form()).await;
        assert_eq!(opened.status, StatusCode::OK, "{}", opened.raw);
    }
    assert_eq!(server.count_rows("mcp_sessions").await, 4, "her 3 and his");
    // Her oldest is gone everywhere: the protocol's answer, and her client opens another.
    let gone = oldest.request("tools/list", json!({})).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.raw);
    let his = bobs.request("tools/list", json!({})).await;
    assert_eq!(his.status, StatusCode::OK, "{}", his.raw);
}

#[tokio::test]
async fn an_initialize_is_kept_small_icons_left_out_and_a_large_one_refused() {
    let server = oidc_server(&[]).await;
    let mallory = token_for(&server, "mallory").await;
    // Icons are for display: a restore does without them, so they are not kept.
    let icon = format!("data:image/png;base64,{}", "A".repeat(8 * 1024));
    let with_icons = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1", "icons": [{"src": icon}]},
    });
    let opened = initialize_with(&server.mcp_url(), Some(&mallory), with_icons).await;
    assert_eq!(opened.status, StatusCode::OK, "{}", opened.raw);
    let kept = server
        .query_i64("SELECT MAX(LENGTH(initialize)) FROM mcp_sessions")
        .await;
    assert!(kept < 1024, "kept {kept} bytes");
    // Capabilities past the 4 KiB a record keeps: refused, nothing stored.
    let large = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"experimental": {"x": {"y": "z".repeat(5 * 1024)}}},
        "clientInfo": {"name": "c", "version": "1"},
    });
    let refused = initialize_with(&server.mcp_url(), Some(&mallory), large).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.raw);
    assert!(refused.raw.contains("too large"), "{}", refused.raw);
    assert_eq!(server.count_rows("mcp_sessions").await, 1);
}
