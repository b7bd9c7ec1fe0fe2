//! Legacy MCP sessions: stored with their owner, found and extended by `touch`, gone once
//! deleted or expired.

use grantry::sessions::SessionRecord;
use grantry::store::Stores;

use crate::for_each_backend;

async fn sessions_are_found_until_deleted_or_expired(stores: &Stores) {
    let sessions = &stores.sessions;
    let id = grantry::seal::random_id();
    let record = SessionRecord {
        owner: "tag-a".into(),
        initialize: r#"{"protocolVersion":"2025-11-25"}"#.into(),
    };
    assert_eq!(sessions.touch(&id, 60_000).await.unwrap(), None);
    sessions.put(&id, &record, 60_000).await.unwrap();
    assert_eq!(
        sessions.touch(&id, 60_000).await.unwrap(),
        Some(record.clone())
    );
    sessions.delete(&id).await.unwrap();
    assert_eq!(sessions.touch(&id, 60_000).await.unwrap(), None, "deleted");

    // `touch` pushes the expiry on: a session used within its lifetime outlives it.
    sessions.put(&id, &record, 300).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(sessions.touch(&id, 300).await.unwrap().is_some());
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        sessions.touch(&id, 300).await.unwrap().is_some(),
        "extended by the last touch"
    );
    tokio::time::sleep(std::time::Duration::from_millis(450)).await;
    assert_eq!(sessions.touch(&id, 300).await.unwrap(), None, "expired");
}
for_each_backend!(sessions_are_found_until_deleted_or_expired);
