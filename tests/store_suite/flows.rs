//! Flows: single-use claims under concurrency, expiry, status, the ticket index.

use grantry::flows::{Claim, Flow, FlowStatus};
use grantry::identity::Principal;
use grantry::store::Stores;

use crate::for_each_backend;

const NOW: i64 = 1_800_000_000;

fn flow(id: &str, state_hash: &str, expires_at: i64) -> Flow {
    Flow {
        id: id.into(),
        ticket_id: format!("ticket-{id}"),
        principal: Principal {
            issuer: "urn:test".into(),
            subject: "alice".into(),
        },
        provider: "demo".into(),
        verifier_sealed: Some("g1.sealed".into()),
        state_hash: state_hash.into(),
        binding_hash: "binding".into(),
        status: FlowStatus::Pending,
        created_at: NOW - 10,
        expires_at,
    }
}

async fn exactly_one_of_fifty_concurrent_claims_wins(stores: &Stores) {
    let flows = stores.flows.clone();
    flows.insert(&flow("f1", "s1", NOW + 600)).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let flows = flows.clone();
        tasks.push(tokio::spawn(async move {
            flows.claim("s1", NOW).await.unwrap()
        }));
    }
    let mut won = 0;
    for task in tasks {
        match task.await.unwrap() {
            Claim::Claimed(f) => {
                assert_eq!(f.id, "f1");
                assert_eq!(f.verifier_sealed.as_deref(), Some("g1.sealed"));
                won += 1;
            }
            Claim::AlreadyUsed(FlowStatus::Redeeming) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(won, 1, "exactly one consumer wins");
}
for_each_backend!(exactly_one_of_fifty_concurrent_claims_wins);

async fn expired_unknown_finished_and_the_ticket_index(stores: &Stores) {
    let flows = &stores.flows;
    flows.insert(&flow("old", "s-old", NOW - 1)).await.unwrap();
    flows
        .insert(&flow("new", "s-new", NOW + 600))
        .await
        .unwrap();
    assert_eq!(flows.claim("s-old", NOW).await.unwrap(), Claim::Expired);
    assert_eq!(flows.claim("nope", NOW).await.unwrap(), Claim::Unknown);

    let Claim::Claimed(claimed) = flows.claim("s-new", NOW).await.unwrap() else {
        panic!("the pending flow is claimed");
    };
    assert_eq!(claimed.status, FlowStatus::Redeeming);
    flows.finish("new", FlowStatus::Connected).await.unwrap();
    assert_eq!(
        flows.claim("s-new", NOW).await.unwrap(),
        Claim::AlreadyUsed(FlowStatus::Connected)
    );
    let latest = flows
        .latest_for_ticket("ticket-new")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.status, FlowStatus::Connected);
    assert_eq!(latest.principal.subject, "alice");
    assert!(
        flows
            .latest_for_ticket("ticket-none")
            .await
            .unwrap()
            .is_none()
    );
    flows.ping().await.unwrap();
}
for_each_backend!(expired_unknown_finished_and_the_ticket_index);
