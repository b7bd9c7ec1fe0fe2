//! Leases: one holder at a time, released only by its holder, expiring on their own.

use crate::startup::Stores;

use crate::tests::store_suite::backends::Fresh;

async fn one_holder_at_a_time_until_release_or_expiry(stores: &Stores) {
    let leases = &stores.leases;
    assert!(leases.try_acquire("refresh:g", "a", 30_000).await.unwrap());
    assert!(!leases.try_acquire("refresh:g", "b", 30_000).await.unwrap());
    assert!(
        leases
            .try_acquire("refresh:other", "b", 30_000)
            .await
            .unwrap()
    );
    leases.release("refresh:g", "b").await.unwrap(); // not b's: no effect
    assert!(!leases.try_acquire("refresh:g", "b", 30_000).await.unwrap());
    leases.release("refresh:g", "a").await.unwrap();
    assert!(leases.try_acquire("refresh:g", "b", 200).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert!(
        leases.try_acquire("refresh:g", "c", 30_000).await.unwrap(),
        "an expired lease can be taken"
    );
}
for_each_backend!(one_holder_at_a_time_until_release_or_expiry);

async fn lapsed_leases_are_removed_and_live_ones_kept(fresh: &Fresh) {
    let leases = &fresh.stores.leases;
    assert!(leases.try_acquire("login-used:a", "x", 100).await.unwrap());
    assert!(
        leases
            .try_acquire("login-used:b", "y", 60_000)
            .await
            .unwrap()
    );
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let removed = leases.delete_expired().await.unwrap();
    // SQL stores remove the lapsed one; Redis has already expired it by itself.
    let expected = if fresh.expires_by_itself() { 0 } else { 1 };
    assert_eq!(removed, expected);
    assert!(
        !fresh.holds_lease_row("login-used:a").await,
        "the lapsed lease is gone from the store"
    );
    assert!(
        fresh.holds_lease_row("login-used:b").await,
        "the live one is not"
    );
    assert!(
        !leases
            .try_acquire("login-used:b", "z", 60_000)
            .await
            .unwrap(),
        "a live lease stays"
    );
    assert!(
        leases
            .try_acquire("login-used:a", "z", 60_000)
            .await
            .unwrap()
    );
}
for_each_backend!(fresh: lapsed_leases_are_removed_and_live_ones_kept);
