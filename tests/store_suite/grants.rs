//! Grants: sealed at rest and bound to their row, versioned writes, conditional deletes.

use std::sync::Arc;

use grantry::grants::{GrantEvents, GrantKey, Grants};
use grantry::identity::Principal;
use grantry::providers::oauth::TokenSet;
use grantry::seal::{KeyRing, Sealer};
use grantry::startup::Stores;
use grantry::store::StoreError;

use crate::for_each_backend;

fn key(sub: &str) -> GrantKey {
    GrantKey {
        principal: Principal {
            issuer: "urn:test".into(),
            subject: sub.into(),
        },
        provider: "demo".into(),
    }
}

fn tokens(access: &str) -> TokenSet {
    TokenSet {
        access_token: access.into(),
        refresh_token: Some(format!("{access}-refresh")),
        expires_at: 2_000_000_000,
        scopes: vec!["invoices:read".into()],
        account: None,
        previous_refresh_token: None,
        rotated_at: None,
    }
}

fn grants(stores: &Stores) -> Grants {
    let sealer = Arc::new(Sealer::new(
        KeyRing::from_keys(&[[5; 32]]).unwrap(),
        "http://127.0.0.1/mcp",
    ));
    Grants::new(stores.grants.clone(), sealer, GrantEvents::new(None))
}

async fn tokens_are_sealed_and_bound_to_their_row(stores: &Stores) {
    let grants = grants(stores);
    grants
        .store_new(&key("alice"), &tokens("alice-access-token-XYZ"), 100)
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
    stores.grants.upsert(&key("bob"), &row).await.unwrap();
    assert!(matches!(
        grants.get(&key("bob")).await,
        Err(StoreError::Corrupt(_))
    ));
    assert!(grants.get(&key("carol")).await.unwrap().is_none());
}
for_each_backend!(tokens_are_sealed_and_bound_to_their_row);

async fn versions_guard_every_rewrite(stores: &Stores) {
    let grants = grants(stores);
    let k = key("dave");
    grants.store_new(&k, &tokens("v1"), 100).await.unwrap();
    let first = grants.get(&k).await.unwrap().unwrap();
    assert!(
        grants
            .replace_if_unchanged(&k, &first, &tokens("v2"), 200)
            .await
            .unwrap()
    );
    assert!(
        !grants
            .replace_if_unchanged(&k, &first, &tokens("stale"), 300)
            .await
            .unwrap(),
        "a stale version loses"
    );
    let got = grants.get(&k).await.unwrap().unwrap();
    assert_eq!((got.tokens.access_token.as_str(), got.version), ("v2", 2));

    // A new sign-in replaces the grant with a higher version.
    grants.store_new(&k, &tokens("v3"), 400).await.unwrap();
    let got = grants.get(&k).await.unwrap().unwrap();
    assert_eq!((got.tokens.access_token.as_str(), got.version), ("v3", 3));

    assert!(
        !grants.delete_if_unchanged(&k, 2).await.unwrap(),
        "stale version"
    );
    assert!(grants.get(&k).await.unwrap().is_some());
    assert!(grants.delete_if_unchanged(&k, 3).await.unwrap());
    assert!(grants.get(&k).await.unwrap().is_none());
    grants.store_new(&k, &tokens("again"), 500).await.unwrap();
    assert!(grants.delete(&k).await.unwrap());
    assert!(!grants.delete(&k).await.unwrap());
}
for_each_backend!(versions_guard_every_rewrite);
