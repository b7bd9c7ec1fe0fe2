//! `--redis-min-replicas`: a write a person is told about counts only once that many replicas
//! hold it (`WAIT`), on the Sentinel topology of the run (a primary with one replica).

use std::time::Duration;

use crate::store::StoreError;
use crate::store::redis::Replication;
use grantry_test_servers as servers;

use crate::tests::store_suite::grants::{demo, grants_for, key, tokens};

async fn stores_asking(min_replicas: u32) -> Option<crate::startup::Stores> {
    let url = servers::redis_topology("GRANTRY_TEST_REDIS_SENTINEL")?;
    let prefix = format!("grantry-test-{}:", servers::random_suffix());
    let replication = Replication {
        min_replicas,
        timeout: Duration::from_millis(300),
    };
    Some(
        crate::startup::open_stores_with(&url.parse().unwrap(), &prefix, replication)
            .await
            .unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_counts_once_the_replicas_asked_for_hold_it() {
    let Some(stores) = stores_asking(1).await else {
        return;
    };
    let (grants, life) = grants_for(&stores, &[]);
    life.store_signed_in(&key("erin"), &demo(), &tokens("erin-1"), 100)
        .await
        .unwrap();
    let stored = grants.get(&key("erin")).await.unwrap().unwrap();
    assert!(
        life.store_refreshed(&key("erin"), &demo(), &stored, &tokens("erin-2"), 200)
            .await
            .unwrap()
    );
    let refreshed = grants.get(&key("erin")).await.unwrap().unwrap();
    assert!(
        life.disconnect(&key("erin"), &refreshed, "test", 300)
            .await
            .unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_too_few_replicas_hold_is_an_error_nobody_is_told_succeeded() {
    let Some(stores) = stores_asking(2).await else {
        return;
    };
    let (_, life) = grants_for(&stores, &[]);
    let refused = life
        .store_signed_in(&key("frank"), &demo(), &tokens("frank-1"), 100)
        .await
        .unwrap_err();
    let StoreError::NotReplicated(why) = &refused else {
        panic!("{refused}");
    };
    assert!(why.contains("1 of the 2 replicas"), "{why}");
}
