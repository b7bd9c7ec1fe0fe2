//! The outbox's delivery side: each delivery is claimed by one caller at a time, a
//! connection's deliveries to an endpoint go out in order, a failed one waits for its next
//! attempt, a parked one is set aside (and `retry` brings it back), `replay` sends delivered
//! ones again with their ids.

use std::collections::HashSet;

use grantry::outbox::{Claimed, Filter, Outcome, Status};
use grantry::startup::Stores;

use crate::for_each_backend;
use crate::grants::{demo, grants_for, key, tokens};

/// `who` connects at 100 and disconnects at 200: two events per endpoint.
async fn connect_and_leave(stores: &Stores, endpoints: &[&str], who: &str) {
    let grants = grants_for(stores, endpoints);
    grants
        .store_signed_in(&key(who), &demo(), &tokens(who), 100)
        .await
        .unwrap();
    let g = grants.get(&key(who)).await.unwrap().unwrap();
    assert!(grants.disconnect(&key(who), &g, "test", 200).await.unwrap());
}

async fn settle_all(stores: &Stores, claimed: &[Claimed], outcome: Outcome) {
    for one in claimed {
        stores.outbox.settle(one, &outcome).await.unwrap();
    }
}

fn ids(claimed: &[Claimed]) -> Vec<(String, String, String)> {
    claimed
        .iter()
        .map(|c| {
            let d = &c.delivery;
            (
                d.connection.clone(),
                d.endpoint.clone(),
                d.event_type.clone(),
            )
        })
        .collect()
}

async fn claims_are_exclusive_and_ordered(stores: &Stores) {
    for who in ["a1", "a2", "a3", "a4", "a5", "a6"] {
        connect_and_leave(stores, &["one", "two"], who).await;
    }
    // Two replicas claim at once: twelve heads (six connections, two endpoints), none twice.
    let (left, right) = tokio::join!(
        stores.outbox.claim(1000, 100, 60),
        stores.outbox.claim(1000, 100, 60)
    );
    let (left, right) = (left.unwrap(), right.unwrap());
    let all: Vec<_> = ids(&left).into_iter().chain(ids(&right)).collect();
    assert_eq!(all.len(), 12, "{all:?}");
    assert_eq!(
        all.iter().collect::<HashSet<_>>().len(),
        12,
        "none claimed twice"
    );
    assert!(
        all.iter().all(|(_, _, t)| t == "connection.created"),
        "oldest first"
    );
    assert!(stores.outbox.claim(1000, 100, 60).await.unwrap().is_empty());
    let claimed: Vec<Claimed> = left.into_iter().chain(right).collect();
    settle_all(stores, &claimed, Outcome::Delivered { at: 1000 }).await;
    let next = stores.outbox.claim(1001, 100, 60).await.unwrap();
    assert_eq!(next.len(), 12);
    assert!(
        next.iter()
            .all(|c| c.delivery.event_type == "connection.disconnected")
    );
    // A claim that lapses (its replica died) is claimed again, its attempt counted.
    let again = stores.outbox.claim(1062, 100, 60).await.unwrap();
    assert_eq!(again.len(), 12);
    assert!(again.iter().all(|c| c.delivery.attempts == 2));
    settle_all(stores, &again, Outcome::Delivered { at: 1062 }).await;
    assert!(stores.outbox.claim(5000, 100, 60).await.unwrap().is_empty());
}
for_each_backend!(claims_are_exclusive_and_ordered);

async fn failures_wait_park_and_come_back(stores: &Stores) {
    connect_and_leave(stores, &["ops"], "b1").await;
    let first = stores.outbox.claim(1000, 10, 60).await.unwrap();
    assert_eq!(first.len(), 1);
    let failed = Outcome::Failed {
        next_attempt_at: 2000,
        error: "HTTP 500".into(),
    };
    settle_all(stores, &first, failed).await;
    assert!(
        stores.outbox.claim(1500, 10, 60).await.unwrap().is_empty(),
        "not before its next attempt, and the next event waits behind it"
    );
    let second = stores.outbox.claim(2000, 10, 60).await.unwrap();
    assert_eq!(second[0].delivery.event_id, first[0].delivery.event_id);
    assert_eq!(second[0].delivery.last_error, "HTTP 500");
    let parked = Outcome::Parked {
        error: "410 Gone".into(),
    };
    settle_all(stores, &second, parked).await;
    let listed = stores
        .outbox
        .list(&Filter {
            status: Some(Status::Parked),
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].event_type, "connection.created");
    // The parked one no longer holds the next back.
    let behind = stores.outbox.claim(2001, 10, 60).await.unwrap();
    assert_eq!(behind[0].delivery.event_type, "connection.disconnected");
    settle_all(stores, &behind, Outcome::Delivered { at: 2001 }).await;
    // `events retry` sends it again, from attempt one, with the same id.
    assert_eq!(stores.outbox.retry_parked(None, 3000).await.unwrap(), 1);
    let retried = stores.outbox.claim(3000, 10, 60).await.unwrap();
    assert_eq!(retried[0].delivery.event_id, first[0].delivery.event_id);
    assert_eq!(retried[0].delivery.attempts, 1);
    settle_all(stores, &retried, Outcome::Delivered { at: 3000 }).await;
    // `events replay` sends what was delivered since then again, with the same ids.
    assert_eq!(stores.outbox.replay(3000, 4000).await.unwrap(), 1);
    let replayed = stores.outbox.claim(4000, 10, 60).await.unwrap();
    assert_eq!(replayed[0].delivery.event_id, first[0].delivery.event_id);
    settle_all(stores, &replayed, Outcome::Delivered { at: 4000 }).await;
    assert_eq!(stores.outbox.depth(5000).await.unwrap().pending, 0);
}
for_each_backend!(failures_wait_park_and_come_back);
