//! Legacy MCP sessions: created once per id, read back, extended only by their owner, gone
//! once deleted or expired; an owner keeps at most so many, the least recently used forgotten.

use crate::sessions::{Created, SessionRecord};
use crate::startup::Stores;

async fn sessions_are_found_until_deleted_or_expired(stores: &Stores) {
    let sessions = &stores.sessions;
    let id = grantry_base::random_id();
    let record = SessionRecord {
        owner: "tag-a".into(),
        initialize: r#"{"protocolVersion":"2025-11-25"}"#.into(),
    };
    assert_eq!(sessions.get(&id).await.unwrap(), None);
    assert!(!sessions.touch(&id, "tag-a", 60_000).await.unwrap());
    assert!(created(
        sessions.create(&id, &record, 60_000, 8).await.unwrap()
    ));
    let other = SessionRecord {
        owner: "tag-b".into(),
        ..record.clone()
    };
    assert!(
        !created(sessions.create(&id, &other, 60_000, 8).await.unwrap()),
        "an id in use is not taken over"
    );
    assert_eq!(sessions.get(&id).await.unwrap(), Some(record.clone()));
    assert!(
        !sessions.touch(&id, "tag-b", 60_000).await.unwrap(),
        "not b's"
    );
    assert!(sessions.touch(&id, "tag-a", 60_000).await.unwrap());
    sessions.delete(&id).await.unwrap();
    assert_eq!(sessions.get(&id).await.unwrap(), None, "deleted");

    // The owner's touch pushes the expiry on; anyone else's does not. Margins of 800 ms
    // either side, so a busy machine's slow round trips cannot decide it.
    let (ttl, step) = (2_000, std::time::Duration::from_millis(1_200));
    assert!(created(
        sessions.create(&id, &record, ttl, 8).await.unwrap()
    ));
    tokio::time::sleep(step).await;
    assert!(sessions.touch(&id, "tag-a", ttl).await.unwrap());
    tokio::time::sleep(step).await;
    assert!(
        sessions.get(&id).await.unwrap().is_some(),
        "extended by the owner's touch"
    );
    assert!(!sessions.touch(&id, "tag-b", 60_000).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(1_600)).await;
    assert_eq!(sessions.get(&id).await.unwrap(), None, "expired");
    assert!(
        created(sessions.create(&id, &other, 60_000, 8).await.unwrap()),
        "an expired id is free again"
    );
    sessions.delete_expired().await.unwrap();
    assert_eq!(
        sessions.get(&id).await.unwrap(),
        Some(other),
        "a sweep keeps live sessions"
    );
}
for_each_backend!(sessions_are_found_until_deleted_or_expired);

fn created(outcome: Created) -> bool {
    match outcome {
        Created::Stored { forgotten } => {
            assert!(forgotten.is_empty(), "{forgotten:?}");
            true
        }
        Created::Taken => false,
    }
}

async fn an_owner_past_the_cap_forgets_their_least_recently_used_session(stores: &Stores) {
    let sessions = &stores.sessions;
    // Unique owners: the Redis tests share one server.
    let (alice, bob) = (grantry_base::random_id(), grantry_base::random_id());
    let record = |owner: &str| SessionRecord {
        owner: owner.to_owned(),
        initialize: "{}".into(),
    };
    let open = |owner: String| {
        let id = grantry_base::random_id();
        async move {
            let outcome = sessions
                .create(&id, &record(&owner), 60_000, 3)
                .await
                .unwrap();
            // Apart in time, so that "least recently used" is well defined.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            (id, outcome)
        }
    };
    let mut hers = Vec::new();
    for _ in 0..3 {
        let (id, outcome) = open(alice.clone()).await;
        assert_eq!(outcome, Created::Stored { forgotten: vec![] });
        hers.push(id);
    }
    let (his, _) = open(bob.clone()).await;
    // Her first is used again: her second is now the least recently used.
    assert!(sessions.touch(&hers[0], &alice, 60_000).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let (fourth, outcome) = open(alice.clone()).await;
    assert_eq!(
        outcome,
        Created::Stored {
            forgotten: vec![hers[1].clone()]
        }
    );
    assert_eq!(sessions.get(&hers[1]).await.unwrap(), None, "forgotten");
    assert!(!sessions.touch(&hers[1], &alice, 60_000).await.unwrap());
    for kept in [&hers[0], &hers[2], &fourth, &his] {
        assert!(sessions.get(kept).await.unwrap().is_some(), "{kept} kept");
    }
    // A deleted session no longer counts: her next one forgets none.
    sessions.delete(&hers[2]).await.unwrap();
    let (_, outcome) = open(alice.clone()).await;
    assert_eq!(outcome, Created::Stored { forgotten: vec![] });
}
for_each_backend!(an_owner_past_the_cap_forgets_their_least_recently_used_session);
