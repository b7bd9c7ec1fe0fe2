//! The outbox's delivery side: each delivery is claimed by one caller at a time, for its own
//! endpoint only, a connection's deliveries to an endpoint go out in order, a failed one
//! waits for its next attempt, a parked one is set aside (and `retry` brings it back),
//! `replay` sends delivered ones again with their ids; what waits for one endpoint is capped,
//! the oldest parked dropped first.

use std::collections::HashSet;

use crate::outbox::{Claimed, Filter, Outcome, Status};
use crate::startup::Stores;

use crate::tests::store_suite::grants::{demo, grants_for, key, tokens};

/// `who` connects at 100 and disconnects at 200: two events per endpoint.
async fn connect_and_leave(stores: &Stores, endpoints: &[&str], who: &str) {
    let (grants, life) = grants_for(stores, endpoints);
    life.store_signed_in(&key(who), &demo(), &tokens(who), 100)
        .await
        .unwrap();
    let g = grants.get(&key(who)).await.unwrap().unwrap();
    assert!(life.disconnect(&key(who), &g, "test", 200).await.unwrap());
}

async fn settle_all(stores: &Stores, claimed: &[Claimed], outcome: Outcome) {
    for one in claimed {
        stores.outbox.settle(one, &outcome).await.unwrap();
    }
}

/// Claims for each of `endpoints` in turn, as each endpoint's loop does.
async fn claim_for(stores: &Stores, endpoints: &[&str], now: i64, limit: usize) -> Vec<Claimed> {
    let mut claimed = Vec::new();
    for endpoint in endpoints {
        claimed.extend(stores.outbox.claim(endpoint, now, limit, 60).await.unwrap());
    }
    claimed
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
    let both = ["one", "two"];
    let (left, right) = tokio::join!(
        claim_for(stores, &both, 1000, 100),
        claim_for(stores, &both, 1000, 100)
    );
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
    assert!(claim_for(stores, &both, 1000, 100).await.is_empty());
    let claimed: Vec<Claimed> = left.into_iter().chain(right).collect();
    settle_all(stores, &claimed, Outcome::Delivered { at: 1000 }).await;
    // One endpoint's claim takes only its own.
    let ones = stores.outbox.claim("one", 1001, 100, 60).await.unwrap();
    assert_eq!(ones.len(), 6);
    assert!(ones.iter().all(|c| c.delivery.endpoint == "one"));
    let next: Vec<Claimed> = ones
        .into_iter()
        .chain(claim_for(stores, &["two"], 1001, 100).await)
        .collect();
    assert_eq!(next.len(), 12);
    assert!(
        next.iter()
            .all(|c| c.delivery.event_type == "connection.disconnected")
    );
    // A claim that lapses (its replica died) is claimed again, its attempt counted.
    let again = claim_for(stores, &both, 1062, 100).await;
    assert_eq!(again.len(), 12);
    assert!(again.iter().all(|c| c.delivery.attempts == 2));
    settle_all(stores, &again, Outcome::Delivered { at: 1062 }).await;
    assert!(claim_for(stores, &both, 5000, 100).await.is_empty());
}
for_each_backend!(claims_are_exclusive_and_ordered);

async fn failures_wait_park_and_come_back(stores: &Stores) {
    connect_and_leave(stores, &["ops"], "b1").await;
    let first = stores.outbox.claim("ops", 1000, 10, 60).await.unwrap();
    assert_eq!(first.len(), 1);
    let failed = Outcome::Failed {
        next_attempt_at: 2000,
        error: "HTTP 500".into(),
    };
    settle_all(stores, &first, failed).await;
    assert!(
        stores
            .outbox
            .claim("ops", 1500, 10, 60)
            .await
            .unwrap()
            .is_empty(),
        "not before its next attempt, and the next event waits behind it"
    );
    let second = stores.outbox.claim("ops", 2000, 10, 60).await.unwrap();
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
    let behind = stores.outbox.claim("ops", 2001, 10, 60).await.unwrap();
    assert_eq!(behind[0].delivery.event_type, "connection.disconnected");
    settle_all(stores, &behind, Outcome::Delivered { at: 2001 }).await;
    // `events retry` sends it again, from attempt one, with the same id.
    assert_eq!(stores.outbox.retry_parked(None, 3000).await.unwrap(), 1);
    let retried = stores.outbox.claim("ops", 3000, 10, 60).await.unwrap();
    assert_eq!(retried[0].delivery.event_id, first[0].delivery.event_id);
    assert_eq!(retried[0].delivery.attempts, 1);
    settle_all(stores, &retried, Outcome::Delivered { at: 3000 }).await;
    // `events replay` sends what was delivered since then again, with the same ids.
    assert_eq!(stores.outbox.replay(3000, 4000).await.unwrap(), 1);
    let replayed = stores.outbox.claim("ops", 4000, 10, 60).await.unwrap();
    assert_eq!(replayed[0].delivery.event_id, first[0].delivery.event_id);
    settle_all(stores, &replayed, Outcome::Delivered { at: 4000 }).await;
    assert_eq!(
        stores.outbox.depth(&["ops"], 5000).await.unwrap().pending,
        0
    );
}
for_each_backend!(failures_wait_park_and_come_back);

async fn past_its_cap_an_endpoint_loses_its_oldest_parked_first(stores: &Stores) {
    // Three connections, two events each, to "ops" and to "audit".
    for who in ["c1", "c2", "c3"] {
        connect_and_leave(stores, &["ops", "audit"], who).await;
    }
    // The first connection's two events to ops are parked (given up on).
    let gone = Outcome::Parked {
        error: "HTTP 410".into(),
    };
    let heads = stores.outbox.claim("ops", 1000, 10, 60).await.unwrap();
    let c1 = heads[0].delivery.connection.clone();
    let first: Vec<Claimed> = heads
        .into_iter()
        .filter(|c| c.delivery.connection == c1)
        .collect();
    settle_all(stores, &first, gone.clone()).await;
    let behind = stores.outbox.claim("ops", 1070, 10, 60).await.unwrap();
    let second: Vec<Claimed> = behind
        .into_iter()
        .filter(|c| c.delivery.connection == c1)
        .collect();
    assert_eq!(second.len(), 1);
    settle_all(stores, &second, gone).await;
    let parked_ids = [
        first[0].delivery.event_id.clone(),
        second[0].delivery.event_id.clone(),
    ];
    assert_eq!(
        stores.outbox.endpoints_pending().await.unwrap().len(),
        2,
        "ops and audit have work"
    );
    // Six wait for ops (two parked, four pending): keeping five drops one parked, the oldest.
    assert_eq!(
        stores.outbox.cap_undelivered("ops", 5, 2000).await.unwrap(),
        1
    );
    let parked = parked_of(stores).await;
    assert_eq!(parked, [parked_ids[1].clone()], "the older parked one went");
    // Keeping three drops the other parked one, then the oldest pending.
    assert_eq!(
        stores.outbox.cap_undelivered("ops", 3, 2000).await.unwrap(),
        2
    );
    assert!(parked_of(stores).await.is_empty());
    let pending: Vec<Claimed> = stores.outbox.claim("ops", 5000, 10, 60).await.unwrap();
    assert_eq!(pending.len(), 2, "two connections still have ops events");
    // The oldest pending went: one connection now heads with its second event.
    let types: Vec<&str> = pending
        .iter()
        .map(|c| c.delivery.event_type.as_str())
        .collect();
    assert!(types.contains(&"connection.disconnected"), "{types:?}");
    assert!(types.contains(&"connection.created"), "{types:?}");
    // Audit is untouched, and a cap not reached drops nothing.
    assert_eq!(
        stores
            .outbox
            .cap_undelivered("audit", 6, 2000)
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        stores
            .outbox
            .claim("audit", 5000, 10, 60)
            .await
            .unwrap()
            .len(),
        3
    );
}
for_each_backend!(past_its_cap_an_endpoint_loses_its_oldest_parked_first);

/// The event ids of the parked deliveries.
async fn parked_of(stores: &Stores) -> Vec<String> {
    stores
        .outbox
        .list(&Filter {
            status: Some(Status::Parked),
            limit: 100,
        })
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.event_id)
        .collect()
}

/// A Redis outbox written by the grantry of before (one due set for every endpoint) is
/// claimed from per endpoint once this grantry opens the store.
#[tokio::test]
async fn redis_lists_due_in_the_one_set_of_before_are_claimed_after_the_upgrade() {
    use grantry_test_servers as servers;
    if !servers::redis_available().await {
        return;
    }
    let prefix = format!("grantry-test-{}:", servers::random_suffix());
    let _cleanup = servers::TempPrefix {
        prefix: prefix.clone(),
    };
    let delivery = crate::outbox::Delivery {
        event_id: "evt_before".into(),
        endpoint: "ops".into(),
        connection: "tag-before".into(),
        event_type: "connection.created".into(),
        body: "{}".into(),
        created_at: 100,
        status: Status::Pending,
        attempts: 0,
        next_attempt_at: 100,
        last_error: String::new(),
        delivered_at: 0,
    };
    // The list as grantry named it before buckets.
    let list = format!("{prefix}outbox:{{tag-before}}:ops");
    let client = redis::Client::open(servers::redis_url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::pipe()
        .cmd("RPUSH")
        .arg(&list)
        .arg(crate::outbox::redis::encode(&delivery))
        .cmd("ZADD")
        .arg(format!("{prefix}outbox-due"))
        .arg(100)
        .arg(&list)
        .query_async(&mut conn)
        .await
        .unwrap();
    let stores = crate::startup::open_stores(&servers::redis_url().parse().unwrap(), &prefix)
        .await
        .unwrap();
    let claimed = stores.outbox.claim("ops", 1000, 10, 60).await.unwrap();
    assert_eq!(ids(&claimed).len(), 1);
    assert_eq!(claimed[0].delivery.event_id, "evt_before");
    let older: i64 = redis::cmd("EXISTS")
        .arg(format!("{prefix}outbox-due"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(older, 0, "the set of before is gone");
}
