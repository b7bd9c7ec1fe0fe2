//! Grants: sealed at rest and bound to their row, versioned writes, conditional deletes.
//! (Their lifecycle events and the keep-alive index: `lifecycle.rs`.)

use std::sync::Arc;

use crate::connections::{Lifecycle, LifecycleSettings};
use crate::grants::{GrantEvents, GrantKey, Grants};
use crate::identity::Principal;
use crate::providers::oauth::TokenSet;
use crate::providers::{Catalog, Provider};
use crate::seal::{KeyRing, Sealer};
use crate::startup::Stores;
use crate::store::StoreError;

pub fn key(sub: &str) -> GrantKey {
    GrantKey {
        principal: Principal {
            issuer: "urn:test".into(),
            subject: sub.into(),
        },
        provider: "demo".parse().unwrap(),
        account: None,
    }
}

pub fn tokens(access: &str) -> TokenSet {
    TokenSet {
        access_token: access.into(),
        refresh_token: Some(format!("{access}-refresh").into()),
        expires_at: 2_000_000_000,
        scopes: vec!["invoices:read".into()],
        account: None,
        previous_refresh_token: None,
        rotated_at: None,
    }
}

/// The sealer of the suite's grants.
pub fn sealer() -> Sealer {
    Sealer::new(
        KeyRing::from_keys(&[[5; 32]]).unwrap(),
        "http://127.0.0.1/mcp",
    )
}

/// Grants over `stores`, and their lifecycle writes queueing events for `endpoints`.
pub fn grants_for(stores: &Stores, endpoints: &[&str]) -> (Grants, Lifecycle) {
    let sealer = Arc::new(sealer());
    let settings = LifecycleSettings {
        endpoints: endpoints.iter().map(|e| e.parse().unwrap()).collect(),
        expiry_warning_secs: 30 * 86_400,
        ..LifecycleSettings::default()
    };
    let grants = Grants::new(stores.grants.clone(), sealer, GrantEvents::new(None));
    (grants.clone(), Lifecycle::new(grants, settings))
}

fn grants(stores: &Stores) -> (Grants, Lifecycle) {
    grants_for(stores, &[])
}

/// The built-in demo provider (no refresh-token lifetimes), as the catalog gives it.
pub fn demo() -> Provider {
    Catalog::demo_entry("http://127.0.0.1:1/demo").unwrap()
}

async fn tokens_are_sealed_and_bound_to_their_row(stores: &Stores) {
    let (grants, life) = grants(stores);
    life.store_signed_in(
        &key("alice"),
        &demo(),
        &tokens("alice-access-token-XYZ"),
        100,
    )
    .await
    .unwrap();
    let got = grants.get(&key("alice")).await.unwrap().unwrap();
    assert_eq!(got.tokens.access_token, "alice-access-token-XYZ");
    assert_eq!(got.version, 1);
    let row = stores.grants.get(&key("alice")).await.unwrap().unwrap();
    assert!(
        !row.tokens_sealed.contains("alice-access-token"),
        "sealed at rest"
    );

    // Alice's ciphertext copied into Bob's row does not open as Bob's grant.
    stores.grants.upsert(&key("bob"), &row, &[]).await.unwrap();
    assert!(matches!(
        grants.get(&key("bob")).await,
        Err(StoreError::Corrupt(_))
    ));
    assert!(grants.get(&key("carol")).await.unwrap().is_none());
}
for_each_backend!(tokens_are_sealed_and_bound_to_their_row);

async fn versions_guard_every_rewrite(stores: &Stores) {
    let ((grants, life), demo) = (grants(stores), demo());
    let k = key("dave");
    life.store_signed_in(&k, &demo, &tokens("v1"), 100)
        .await
        .unwrap();
    let first = grants.get(&k).await.unwrap().unwrap();
    assert!(
        life.store_refreshed(&k, &demo, &first, &tokens("v2"), 200)
            .await
            .unwrap()
    );
    assert!(
        !life
            .store_refreshed(&k, &demo, &first, &tokens("stale"), 300)
            .await
            .unwrap(),
        "a stale version loses"
    );
    let second = grants.get(&k).await.unwrap().unwrap();
    assert_eq!(
        (second.tokens.access_token.expose(), second.version),
        ("v2", 2)
    );

    // A new sign-in replaces the grant with a higher version, as the same connection.
    life.store_signed_in(&k, &demo, &tokens("v3"), 400)
        .await
        .unwrap();
    let third = grants.get(&k).await.unwrap().unwrap();
    assert_eq!(
        (third.tokens.access_token.expose(), third.version),
        ("v3", 3)
    );
    assert_eq!(third.connection_id, first.connection_id);
    assert_eq!(third.created_at, 100, "connected since the first sign-in");

    assert!(
        !life.disconnect(&k, &second, "test", 450).await.unwrap(),
        "stale version"
    );
    assert!(grants.get(&k).await.unwrap().is_some());
    assert!(life.disconnect(&k, &third, "test", 450).await.unwrap());
    assert!(grants.get(&k).await.unwrap().is_none());
    life.store_signed_in(&k, &demo, &tokens("again"), 500)
        .await
        .unwrap();
    let anew = grants.get(&k).await.unwrap().unwrap();
    assert_ne!(
        anew.connection_id, first.connection_id,
        "a new connection after a disconnect"
    );
}
for_each_backend!(versions_guard_every_rewrite);
