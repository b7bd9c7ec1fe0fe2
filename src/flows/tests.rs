use std::sync::Arc;

use super::*;

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
        created_at: 100,
        expires_at,
    }
}

async fn flows(dir: &tempfile::TempDir) -> Arc<dyn FlowBackend> {
    let url = format!("sqlite://{}", dir.path().join("f.db").display());
    crate::store::open(&url).await.unwrap().flows
}

#[tokio::test]
async fn exactly_one_of_fifty_concurrent_claims_wins() {
    let dir = tempfile::tempdir().unwrap();
    let flows = flows(&dir).await;
    flows.insert(&flow("f1", "s1", 1_000)).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let flows = flows.clone();
        tasks.push(tokio::spawn(async move {
            flows.claim("s1", 500).await.unwrap()
        }));
    }
    let mut won = 0;
    for task in tasks {
        match task.await.unwrap() {
            Claim::Claimed(f) => {
                assert_eq!(f.id, "f1");
                won += 1;
            }
            Claim::AlreadyUsed(FlowStatus::Redeeming) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(won, 1);
}

#[tokio::test]
async fn expired_unknown_finished_and_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let flows = flows(&dir).await;
    flows.insert(&flow("old", "s-old", 200)).await.unwrap();
    flows.insert(&flow("new", "s-new", 5_000)).await.unwrap();
    assert_eq!(flows.claim("s-old", 300).await.unwrap(), Claim::Expired);
    assert_eq!(flows.claim("nope", 300).await.unwrap(), Claim::Unknown);

    assert!(matches!(
        flows.claim("s-new", 300).await.unwrap(),
        Claim::Claimed(_)
    ));
    flows.finish("new", FlowStatus::Connected).await.unwrap();
    assert_eq!(
        flows.claim("s-new", 300).await.unwrap(),
        Claim::AlreadyUsed(FlowStatus::Connected)
    );
    let latest = flows
        .latest_for_ticket("ticket-new")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.status, FlowStatus::Connected);

    assert_eq!(flows.delete_expired(1_000).await.unwrap(), 1);
    assert_eq!(flows.claim("s-old", 300).await.unwrap(), Claim::Unknown);
    assert!(
        flows
            .latest_for_ticket("ticket-new")
            .await
            .unwrap()
            .is_some()
    );
}
