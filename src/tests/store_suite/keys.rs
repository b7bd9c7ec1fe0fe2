//! Key rotation: grants sealed under an old key keep opening, new writes use the new key,
//! and a batched rewrap moves every grant to the new key without losing one.

use std::sync::Arc;

use crate::connections::{Lifecycle, LifecycleSettings};
use crate::grants::{GrantEvents, GrantKey, Grants};
use crate::identity::Principal;
use crate::providers::oauth::TokenSet;
use crate::seal::{KeyRing, Sealer};
use crate::startup::Stores;

const OLD: [u8; 32] = [1; 32];
const NEW: [u8; 32] = [2; 32];

fn grants(stores: &Stores, keys: &[[u8; 32]]) -> Grants {
    let sealer = Arc::new(Sealer::new(
        KeyRing::from_keys(keys).unwrap(),
        "http://127.0.0.1/mcp",
    ));
    Grants::new(stores.grants.clone(), sealer, GrantEvents::new(None))
}

/// The lifecycle writes over `grants`, queueing no events.
fn writes(grants: &Grants) -> Lifecycle {
    Lifecycle::new(grants.clone(), LifecycleSettings::default())
}

fn key(i: usize) -> GrantKey {
    GrantKey {
        principal: Principal {
            issuer: "urn:test".into(),
            subject: format!("user-{i}"),
        },
        provider: "demo".parse().unwrap(),
        account: None,
    }
}

fn tokens(i: usize) -> TokenSet {
    TokenSet {
        access_token: format!("access-{i}").into(),
        refresh_token: Some(format!("refresh-{i}").into()),
        expires_at: 2_000_000_000,
        scopes: vec![],
        account: None,
        previous_refresh_token: None,
        rotated_at: None,
    }
}

fn key_id(k: [u8; 32]) -> String {
    KeyRing::from_keys(&[k]).unwrap().current_key_id()
}

/// Seals `n` grants under OLD, rotates to NEW and rewraps in batches of `batch`.
pub async fn rotate(stores: &Stores, n: usize, batch: usize) {
    let old = grants(stores, &[OLD]);
    let demo = crate::tests::store_suite::grants::demo();
    // Seed 32 writers at a time: a store's pool, not the test, sets the pace.
    for chunk in (0..n).collect::<Vec<_>>().chunks(32) {
        let writes: Vec<_> = chunk
            .iter()
            .map(|&i| {
                let (old, demo) = (old.clone(), demo.clone());
                tokio::spawn(async move {
                    writes(&old)
                        .store_signed_in(&key(i), &demo, &tokens(i), 100)
                        .await
                        .unwrap()
                })
            })
            .collect();
        for write in writes {
            write.await.unwrap();
        }
    }
    assert_eq!(
        old.key_usage().await.unwrap(),
        vec![(key_id(OLD), n as i64)]
    );

    let rotated = grants(stores, &[NEW, OLD]);
    // Old grants still open; a write re-seals under the new key at once.
    assert_eq!(
        rotated
            .get(&key(0))
            .await
            .unwrap()
            .unwrap()
            .tokens
            .access_token,
        "access-0"
    );
    writes(&rotated)
        .store_signed_in(&key(0), &demo, &tokens(0), 200)
        .await
        .unwrap();

    let mut total = 0;
    loop {
        let report = rotated.rewrap_batch(batch).await.unwrap();
        assert!(report.rewrapped <= batch);
        total += report.rewrapped;
        if report.rewrapped == 0 && report.changed_meanwhile == 0 {
            break;
        }
    }
    assert_eq!(
        total,
        n - 1,
        "every grant but the one rewritten is rewrapped once"
    );
    assert_eq!(
        rotated.key_usage().await.unwrap(),
        vec![(key_id(NEW), n as i64)]
    );

    // The old key retired: every grant opens, none lost, each still its own.
    let new_only = grants(stores, &[NEW]);
    for i in 0..n {
        let grant = new_only.get(&key(i)).await.unwrap().expect("no grant lost");
        assert_eq!(grant.tokens.access_token, format!("access-{i}"));
    }
}

async fn rotation_rewraps_every_grant(stores: &Stores) {
    rotate(stores, 120, 25).await;
}
for_each_backend!(rotation_rewraps_every_grant);

async fn rotation_of_ten_thousand_grants_loses_none(stores: &Stores) {
    let started = std::time::Instant::now();
    rotate(stores, 10_000, 500).await;
    eprintln!(
        "10 000 grants seeded, rotated and checked in {:?}",
        started.elapsed()
    );
}
for_each_backend!(rotation_of_ten_thousand_grants_loses_none);
