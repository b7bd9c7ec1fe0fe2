//! Flows: single-use claims under concurrency, expiry, status, the ticket index.

use crate::flows::{Claim, Flow, FlowStatus, Handout};
use crate::identity::Principal;
use crate::startup::Stores;

const NOW: i64 = 1_800_000_000;

fn flow(id: &str, state_hash: &str, expires_at: i64) -> Flow {
    Flow {
        id: id.into(),
        ticket_id: format!("ticket-{id}"),
        principal: Principal {
            issuer: "urn:test".into(),
            subject: "alice".into(),
        },
        provider: "demo".parse().unwrap(),
        verifier_sealed: Some("g1.sealed".into()),
        state_hash: state_hash.into(),
        binding_hash: "binding".into(),
        status: FlowStatus::Pending,
        created_at: NOW - 10,
        expires_at,
        claimed_at: None,
        scopes: vec!["invoices:read".into(), "invoices:write".into()],
        handout: Handout::AskAgain,
    }
}

/// The status of an already-used claim; panics on any other outcome.
fn used(claim: Claim) -> FlowStatus {
    match claim {
        Claim::AlreadyUsed(flow) => flow.status,
        other => panic!("expected an already-used flow, got {other:?}"),
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
                assert_eq!(f.scopes, ["invoices:read", "invoices:write"]);
                assert_eq!(f.handout, Handout::AskAgain, "how its link was handed out");
                won += 1;
            }
            Claim::AlreadyUsed(f) if f.status == FlowStatus::Redeeming => {
                assert_eq!(f.claimed_at, Some(NOW), "the winner's claim time");
            }
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
        used(flows.claim("s-new", NOW).await.unwrap()),
        FlowStatus::Connected
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

async fn pending_flows_past_the_cap_are_superseded_oldest_first(stores: &Stores) {
    let flows = &stores.flows;
    for (i, id) in ["a", "b", "c", "d"].iter().enumerate() {
        let mut f = flow(id, &format!("s-{id}"), NOW + 600);
        f.created_at = NOW - 100 + i as i64;
        flows.insert(&f).await.unwrap();
    }
    // One finished flow does not count against the cap.
    assert!(matches!(
        flows.claim("s-d", NOW).await.unwrap(),
        Claim::Claimed(_)
    ));
    flows.finish("d", FlowStatus::Connected).await.unwrap();
    let mut bob = flow("e", "s-e", NOW + 600);
    bob.principal.subject = "bob".into();
    flows.insert(&bob).await.unwrap();

    let alice = flow("x", "x", 0).principal;
    assert_eq!(flows.supersede_pending(&alice, 2).await.unwrap(), 1);
    assert_eq!(
        used(flows.claim("s-a", NOW).await.unwrap()),
        FlowStatus::Superseded,
        "the oldest pending one is superseded"
    );
    assert!(matches!(
        flows.claim("s-c", NOW).await.unwrap(),
        Claim::Claimed(_)
    ));
    assert!(
        matches!(flows.claim("s-e", NOW).await.unwrap(), Claim::Claimed(_)),
        "another principal's flow is untouched"
    );
    assert_eq!(flows.supersede_pending(&alice, 2).await.unwrap(), 0);
}
for_each_backend!(pending_flows_past_the_cap_are_superseded_oldest_first);

async fn a_flow_left_redeeming_past_its_deadline_is_failed_once(stores: &Stores) {
    use crate::flows::REDEEM_DEADLINE_SECS;
    let flows = &stores.flows;
    flows
        .insert(&flow("stuck", "s-stuck", NOW + 600))
        .await
        .unwrap();
    let Claim::Claimed(claimed) = flows.claim("s-stuck", NOW).await.unwrap() else {
        panic!("claimed");
    };
    assert_eq!(claimed.claimed_at, Some(NOW));
    let later = NOW + REDEEM_DEADLINE_SECS + 1;
    // Within the deadline nothing is stuck, and nothing changes.
    assert!(!claimed.is_stuck(NOW + 5));
    assert!(!flows.fail_stuck(&claimed, NOW - 1).await.unwrap());
    assert_eq!(
        used(flows.claim("s-stuck", NOW + 5).await.unwrap()),
        FlowStatus::Redeeming
    );
    // Past it, the first caller fails it, and only the first.
    assert!(claimed.is_stuck(later));
    assert!(
        flows
            .fail_stuck(&claimed, later - REDEEM_DEADLINE_SECS)
            .await
            .unwrap()
    );
    assert!(
        !flows
            .fail_stuck(&claimed, later - REDEEM_DEADLINE_SECS)
            .await
            .unwrap()
    );
    let reread = flows.claim("s-stuck", later).await.unwrap();
    let Claim::AlreadyUsed(reread) = reread else {
        panic!("already used");
    };
    assert_eq!(reread.status, FlowStatus::Failed);
    assert_eq!(
        (reread.id.as_str(), reread.provider.as_str()),
        ("stuck", "demo")
    );
    assert_eq!(reread.principal.subject, "alice");
}
for_each_backend!(a_flow_left_redeeming_past_its_deadline_is_failed_once);
