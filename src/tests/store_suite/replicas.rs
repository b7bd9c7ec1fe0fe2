//! Replicas' records: written and read back, refreshed in place, those not refreshed lately
//! left out of the live ones, removed when their replica stops or long dead; and the join
//! that refuses a replica disagreeing with a live one, leaving no record of it.

use crate::replicas::membership::{JoinError, Membership};
use crate::replicas::{Disagreement, Replica};
use crate::startup::Stores;

fn replica(id: &str, seen_at_ms: i64, public_url: &str) -> Replica {
    Replica {
        id: id.into(),
        host: "host".into(),
        listen: format!("127.0.0.1:{}", 8000 + id.len()),
        public_url: public_url.into(),
        sealing_key: "0a0b0c0d".into(),
        key_ids: vec!["0a0b0c0d".into()],
        started_at_ms: seen_at_ms,
        seen_at_ms,
    }
}

async fn records_are_kept_refreshed_and_removed(stores: &Stores) {
    let replicas = &stores.replicas;
    let a = replica("a", 1_000, "https://g.example");
    let b = replica("bb", 5_000, "https://g.example");
    replicas.record(&a).await.unwrap();
    replicas.record(&b).await.unwrap();
    assert_eq!(
        replicas.seen_since(0).await.unwrap(),
        [a.clone(), b.clone()]
    );
    assert_eq!(
        replicas.seen_since(2_000).await.unwrap(),
        std::slice::from_ref(&b),
        "a is not live"
    );

    let refreshed = Replica {
        seen_at_ms: 9_000,
        ..a.clone()
    };
    replicas.record(&refreshed).await.unwrap();
    assert_eq!(
        replicas.seen_since(6_000).await.unwrap(),
        std::slice::from_ref(&refreshed),
        "one record per replica, in place"
    );
    assert_eq!(replicas.remove_older(6_000).await.unwrap(), 1);
    replicas.remove(&refreshed.id).await.unwrap();
    assert!(replicas.seen_since(0).await.unwrap().is_empty());
}
for_each_backend!(records_are_kept_refreshed_and_removed);

async fn a_replica_that_disagrees_is_refused_and_leaves_no_record(stores: &Stores) {
    let now = grantry_base::clock::unix_now_millis();
    let first = Membership::join(
        stores.replicas.clone(),
        replica("a", now, "https://g.example"),
    )
    .await
    .unwrap();
    let other = replica("bb", now + 1, "http://127.0.0.1:9");
    let refused = Membership::join(stores.replicas.clone(), other).await;
    assert!(
        matches!(
            refused,
            Err(JoinError::Disagrees(Disagreement::PublicUrl { .. }))
        ),
        "{:?}",
        refused.err()
    );
    let live = stores.replicas.seen_since(0).await.unwrap();
    assert_eq!(live.len(), 1, "only the first: {live:?}");
    first.leave().await;
    assert!(stores.replicas.seen_since(0).await.unwrap().is_empty());
}
for_each_backend!(a_replica_that_disagrees_is_refused_and_leaves_no_record);
