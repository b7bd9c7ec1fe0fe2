//! Connection lifecycle in the store: every change is written with its event in the same
//! write (and a write that loses its compare-and-set writes none), a connection keeps its id
//! through reconnects, and the keep-alive index holds exactly the grants due.

use crate::connections::schedule;
use crate::grants::{Due, GrantKey, Grants, ReauthReason, Reschedule, State};
use crate::outbox::Outcome;
use crate::providers::{Provider, SignIn};
use crate::startup::Stores;
use crate::store::StoreError;
use serde_json::Value;

use crate::tests::store_suite::grants::{demo, grants_for, key, tokens};

/// A provider whose refresh tokens die unused after 1000 s.
fn idle_1000() -> Provider {
    let mut provider = demo();
    if let SignIn::OAuth(oauth) = &mut provider.sign_in {
        oauth.refresh_idle_secs = Some(1000);
    }
    provider
}

/// The keys of the grants the keep-alive would look at by `now`.
async fn due_keys(grants: &Grants, now: i64, limit: usize) -> Result<Vec<GrantKey>, StoreError> {
    let due = grants.due_for_keepalive(now, limit).await?;
    Ok(due.into_iter().map(|d| d.key).collect())
}

/// Every event in the outbox for the endpoint `ops`, in the order a receiver gets them
/// (claiming one at a time shows that only the oldest of a connection is ever handed out).
pub async fn drain(stores: &Stores, now: i64) -> Vec<(String, Value)> {
    let mut seen = Vec::new();
    loop {
        let claimed = stores.outbox.claim("ops", now, 10, 60).await.unwrap();
        if claimed.is_empty() {
            return seen;
        }
        assert_eq!(
            claimed.len(),
            1,
            "one connection: only its oldest is claimable"
        );
        let one = &claimed[0];
        stores
            .outbox
            .settle(one, &Outcome::Delivered { at: now })
            .await
            .unwrap();
        let body: Value = serde_json::from_str(&one.delivery.body).unwrap();
        seen.push((one.delivery.event_type.clone(), body));
    }
}

async fn every_change_is_written_with_its_event(stores: &Stores) {
    let (grants, life) = grants_for(stores, &["ops"]);
    let provider = idle_1000();
    let k = key("erin");
    let get = || async { grants.get(&k).await.unwrap().unwrap() };
    life.store_signed_in(&k, &provider, &tokens("erin-secret-1"), 100)
        .await
        .unwrap();
    let first = get().await;
    assert!(
        life.note_refresh_failed(&k, &provider, &first, "HTTP 503", 200)
            .await
            .unwrap()
    );
    let failing = get().await;
    assert_eq!(
        (failing.state, failing.health.failures),
        (State::RefreshFailing, 1)
    );
    assert!(failing.health.retry_at > 200);
    assert!(
        life.note_refresh_failed(&k, &provider, &failing, "timed out", 300)
            .await
            .unwrap()
    );
    let still = get().await;
    assert_eq!(still.health.failures, 2, "counted, without a second event");
    assert!(
        life.store_refreshed(&k, &provider, &still, &tokens("erin-secret-2"), 400)
            .await
            .unwrap()
    );
    let recovered = get().await;
    assert_eq!(
        (recovered.state, recovered.health.failures),
        (State::Active, 0)
    );
    assert!(
        !life
            .mark_needs_reauth(&k, &provider, &still, ReauthReason::InvalidGrant, 450)
            .await
            .unwrap(),
        "a stale write changes nothing and writes no event"
    );
    assert!(
        life.mark_needs_reauth(&k, &provider, &recovered, ReauthReason::InvalidGrant, 500)
            .await
            .unwrap()
    );
    let dead = get().await;
    assert!(!dead.is_usable(), "kept, but not usable");
    assert_eq!(dead.health.reason.as_deref(), Some("invalid_grant"));
    assert!(
        life.mark_needs_reauth(&k, &provider, &dead, ReauthReason::InvalidGrant, 550)
            .await
            .unwrap()
    );
    life.store_signed_in(&k, &provider, &tokens("erin-secret-3"), 600)
        .await
        .unwrap();
    let again = get().await;
    assert_eq!(
        again.connection_id, first.connection_id,
        "reconnected, same connection"
    );
    assert_eq!(again.state, State::Active);
    assert!(
        life.disconnect(&k, &again, "disconnected by the user", 700)
            .await
            .unwrap()
    );

    let events = drain(stores, 10_000).await;
    let types: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        types,
        [
            "connection.created",
            "connection.refresh_failed",
            "connection.recovered",
            "connection.needs_reauth",
            "connection.reconnected",
            "connection.disconnected"
        ]
    );
    for (event_type, body) in &events {
        assert_eq!(body["type"], event_type.as_str());
        assert_eq!(body["data"]["connection_id"], first.connection_id.as_str());
        assert_eq!(body["data"]["principal"]["sub"], "erin");
        assert_eq!(body["data"]["provider"], "demo");
        assert!(
            !body.to_string().contains("erin-secret"),
            "no token: {body}"
        );
    }
    assert_eq!(events[1].1["data"]["reason"], "HTTP 503");
    assert_eq!(events[3].1["data"]["reason"], "invalid_grant");
    assert_eq!(events[5].1["data"]["state"], "disconnected");
}
for_each_backend!(every_change_is_written_with_its_event);

async fn without_endpoints_nothing_is_queued(stores: &Stores) {
    let (_, life) = grants_for(stores, &[]);
    life.store_signed_in(&key("fay"), &demo(), &tokens("fay"), 100)
        .await
        .unwrap();
    assert!(
        stores
            .outbox
            .claim("ops", 10_000, 10, 60)
            .await
            .unwrap()
            .is_empty()
    );
    let all = crate::outbox::Filter {
        status: None,
        limit: 10,
    };
    assert!(stores.outbox.list(&all).await.unwrap().is_empty());
}
for_each_backend!(without_endpoints_nothing_is_queued);

async fn the_keepalive_index_holds_what_is_due(stores: &Stores) {
    let (grants, life) = grants_for(stores, &[]);
    let provider = idle_1000();
    let (kept, plain) = (key("gus"), key("hal"));
    life.store_signed_in(&kept, &provider, &tokens("g"), 100)
        .await
        .unwrap();
    life.store_signed_in(&plain, &demo(), &tokens("h"), 100)
        .await
        .unwrap();
    // Refreshed at 75-85 % of the idle window after the sign-in.
    assert!(due_keys(&grants, 849, 10).await.unwrap().is_empty());
    assert_eq!(
        due_keys(&grants, 951, 10).await.unwrap(),
        std::slice::from_ref(&kept)
    );
    assert!(
        due_keys(&grants, i64::MAX / 2, 10).await.unwrap() == [kept.clone()],
        "a provider without an idle window is never kept alive"
    );
    // A refresh moves the next look on by the window.
    let g = grants.get(&kept).await.unwrap().unwrap();
    life.store_refreshed(&kept, &provider, &g, &tokens("g2"), 900)
        .await
        .unwrap();
    assert!(due_keys(&grants, 1649, 10).await.unwrap().is_empty());
    assert_eq!(
        due_keys(&grants, 1751, 10).await.unwrap(),
        std::slice::from_ref(&kept)
    );
    // A connection that needs the user is off the keep-alive.
    let g = grants.get(&kept).await.unwrap().unwrap();
    life.mark_needs_reauth(&kept, &provider, &g, ReauthReason::InvalidGrant, 1000)
        .await
        .unwrap();
    assert!(
        due_keys(&grants, i64::MAX / 2, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // The scheduler reschedules a grant it finds not yet due (a row from before the index).
    life.store_signed_in(&kept, &provider, &tokens("g3"), 2000)
        .await
        .unwrap();
    let g = grants.get(&kept).await.unwrap().unwrap();
    grants
        .reschedule(&[Reschedule::never(&kept, g.version)])
        .await
        .unwrap();
    assert!(
        due_keys(&grants, i64::MAX / 2, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let next = schedule::next_look_of(&Due::of(&kept, &g), &provider, 30 * 86_400);
    grants.reschedule(&[next]).await.unwrap();
    assert_eq!(due_keys(&grants, 2851, 10).await.unwrap(), [kept]);
}
for_each_backend!(the_keepalive_index_holds_what_is_due);

async fn states_are_counted_by_provider(stores: &Stores) {
    let (grants, life) = grants_for(stores, &[]);
    let provider = idle_1000();
    for who in ["ida", "jon", "kim"] {
        life.store_signed_in(&key(who), &provider, &tokens(who), 100)
            .await
            .unwrap();
    }
    let g = grants.get(&key("kim")).await.unwrap().unwrap();
    life.mark_needs_reauth(
        &key("kim"),
        &provider,
        &g,
        ReauthReason::AccessWithdrawn,
        200,
    )
    .await
    .unwrap();
    let mut counts = grants.count_by_state().await.unwrap();
    counts.sort();
    assert_eq!(
        counts,
        [
            ("demo".to_owned(), "active".to_owned(), 2),
            ("demo".to_owned(), "needs_reauth".to_owned(), 1)
        ]
    );
}
for_each_backend!(states_are_counted_by_provider);
