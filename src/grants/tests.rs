use super::*;
use crate::seal::KeyRing;

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
    }
}

async fn grants(dir: &tempfile::TempDir) -> (Grants, Arc<dyn GrantBackend>) {
    let url = format!("sqlite://{}", dir.path().join("g.db").display());
    let stores = crate::store::open(&url).await.unwrap();
    let sealer = Arc::new(Sealer::new(
        KeyRing::from_keys(&[[5; 32]]).unwrap(),
        "http://127.0.0.1/mcp",
    ));
    (
        Grants::new(stores.grants.clone(), sealer, GrantEvents::new()),
        stores.grants,
    )
}

#[tokio::test]
async fn tokens_are_sealed_at_rest_and_bound_to_their_row() {
    let dir = tempfile::tempdir().unwrap();
    let (grants, backend) = grants(&dir).await;
    grants
        .store_new(&key("alice"), &tokens("alice-access-token-XYZ"), 100)
        .await
        .unwrap();
    let got = grants.get(&key("alice")).await.unwrap().unwrap();
    assert_eq!(got.tokens.access_token, "alice-access-token-XYZ");
    assert_eq!(got.version, 1);

    // Nothing on disk carries the token in clear.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let found = bytes
            .windows(b"alice-access-token-XYZ".len())
            .any(|w| w == b"alice-access-token-XYZ");
        assert!(!found, "token found in clear in the store files");
    }

    // Alice's ciphertext copied into Bob's row does not open as Bob's grant.
    let alice_row = backend.get(&key("alice")).await.unwrap().unwrap();
    backend.upsert(&key("bob"), &alice_row).await.unwrap();
    assert!(matches!(
        grants.get(&key("bob")).await,
        Err(StoreError::Corrupt(_))
    ));
}

#[tokio::test]
async fn compare_and_set_refuses_a_stale_version() {
    let dir = tempfile::tempdir().unwrap();
    let (grants, _) = grants(&dir).await;
    let k = key("carol");
    grants.store_new(&k, &tokens("v1"), 100).await.unwrap();
    assert!(
        grants
            .replace_if_unchanged(&k, 1, 100, &tokens("v2"), 200)
            .await
            .unwrap()
    );
    assert!(
        !grants
            .replace_if_unchanged(&k, 1, 100, &tokens("stale"), 300)
            .await
            .unwrap()
    );
    let got = grants.get(&k).await.unwrap().unwrap();
    assert_eq!(got.tokens.access_token, "v2");
    assert_eq!(got.version, 2);
    assert!(
        !grants.delete_if_unchanged(&k, 1).await.unwrap(),
        "stale version"
    );
    assert!(grants.get(&k).await.unwrap().is_some());
    assert!(grants.delete_if_unchanged(&k, 2).await.unwrap());
    assert!(grants.get(&k).await.unwrap().is_none());
}
