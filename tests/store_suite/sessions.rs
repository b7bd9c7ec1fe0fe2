//! Legacy MCP sessions: created once per id, read back, extended only by their owner, gone
//! once deleted or expired.

use grantry::sessions::SessionRecord;
use grantry::startup::Stores;

use crate::for_each_backend;

async fn sessions_are_found_until_deleted_or_expired(stores: &Stores) {
    let sessions = &stores.sessions;
    let id = grantry::seal::random_id();
    let record = SessionRecord {
        owner: "tag-a".into(),
        initialize: r#"{"protocolVersion":"2025-11-25"}"#.into(),
    };
    assert_eq!(sessions.get(&id).await.unwrap(), None);
    assert!(!sessions.touch(&id, "tag-a", 60_000).await.unwrap());
    assert!(sessions.create(&id, &record, 60_000).await.unwrap());
    let other = SessionRecord {
        owner: "tag-b".into(),
        ..record.clone()
    };
    assert!(
        !sessions.create(&id, &other, 60_000).await.unwrap(),
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

    // The owner's touch pushes the expiry on; anyone else's does not.
    assert!(sessions.create(&id, &record, 300).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(sessions.touch(&id, "tag-a", 300).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        sessions.get(&id).await.unwrap().is_some(),
        "extended by the owner's touch"
    );
    assert!(!sessions.touch(&id, "tag-b", 60_000).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    assert_eq!(sessions.get(&id).await.unwrap(), None, "expired");
    assert!(
        sessions.create(&id, &other, 60_000).await.unwrap(),
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
