//! Several accounts per provider: a grant is keyed by (principal, provider, account). A
//! grant written by the previous grantry (keyed by principal and provider only) migrates on
//! every store with nothing lost: it is found, opens, keeps its id and history, a sign-in to
//! its account replaces it in place, and a sign-in to another account adds a connection.

use crate::identity::Principal;
use crate::providers::Account;
use crate::providers::oauth::TokenSet;
use crate::seal::Purpose;

use crate::tests::store_suite::backends::{Backend, OldGrant};
use crate::tests::store_suite::grants::{demo, grants_for, sealer, tokens};

const PROVIDER: &str = "xero";

fn provider_id() -> crate::ids::ProviderId {
    PROVIDER.parse().unwrap()
}

fn principal() -> Principal {
    Principal {
        issuer: "urn:test".into(),
        subject: "owner-of-two-organisations".into(),
    }
}

fn account(id: &str, name: &str) -> Account {
    Account {
        id: crate::ids::AccountId::given(id).unwrap(),
        name: name.into(),
    }
}

fn with_account(access: &str, account: Account) -> TokenSet {
    TokenSet {
        account: Some(account),
        ..tokens(access)
    }
}

/// The previous grantry's AEAD binding of a grant row: (principal, provider), no account.
fn old_binding(principal: &Principal) -> Vec<u8> {
    let mut b = Vec::new();
    for part in ["grant/v1", &principal.issuer, &principal.subject, PROVIDER] {
        b.extend_from_slice(&(part.len() as u32).to_be_bytes());
        b.extend_from_slice(part.as_bytes());
    }
    b
}

/// A Xero grant for the first organisation, sealed and written the previous grantry's way.
fn old_grant() -> OldGrant {
    let sealer = sealer();
    let plain = serde_json::to_vec(&with_account(
        "old-access",
        account("tenant-1", "Demo Company (UK)"),
    ))
    .unwrap();
    let principal = principal();
    OldGrant {
        issuer: principal.issuer.clone(),
        subject: principal.subject.clone(),
        provider: PROVIDER.into(),
        tokens_sealed: sealer.seal_bytes(Purpose::StoredGrant, &old_binding(&principal), &plain),
        key_id: sealer.key_ring().current_key_id(),
        connection_id: "conn_from_before".into(),
        version: 3,
        created_at: 1_700_000_000,
    }
}

async fn an_old_grant_migrates_and_another_account_adds_a_connection(backend: Backend) {
    let Some(fresh) = backend.open_with_old_grant(&old_grant()).await else {
        return;
    };
    let (grants, life) = grants_for(&fresh.stores, &[]);
    // Only its refresh policy matters to these writes.
    let provider = demo();
    let principal = principal();

    // Found, opened, with its id, version and history.
    let listed = grants.list(&principal, &provider_id()).await.unwrap();
    assert_eq!(listed.len(), 1, "the old grant is found");
    let (old_key, old) = &listed[0];
    assert_eq!(old.tokens.access_token, "old-access");
    assert_eq!(old.account_id().map(|a| a.as_str()), Some("tenant-1"));
    assert_eq!(old.connection_id, "conn_from_before");
    assert_eq!((old.version, old.created_at), (3, 1_700_000_000));

    // A sign-in to the same organisation replaces it in place: same id, next version.
    let first = account("tenant-1", "Demo Company (UK)");
    let key = grants
        .key_for_sign_in(&principal, &provider_id(), Some(&first))
        .await
        .unwrap();
    assert_eq!(&key, old_key, "the same account's grant is the old row");
    life.store_signed_in(
        &key,
        &provider,
        &with_account("renewed", first),
        1_800_000_000,
    )
    .await
    .unwrap();
    let listed = grants.list(&principal, &provider_id()).await.unwrap();
    assert_eq!(listed.len(), 1, "replaced, not doubled");
    assert_eq!(listed[0].1.tokens.access_token, "renewed");
    assert_eq!(listed[0].1.connection_id, "conn_from_before");
    assert_eq!(listed[0].1.version, 4);
    assert_eq!(listed[0].1.created_at, 1_700_000_000);

    // Another organisation: a connection of its own beside it.
    let second = account("tenant-2", "Second Company (NZ)");
    let key = grants
        .key_for_sign_in(&principal, &provider_id(), Some(&second))
        .await
        .unwrap();
    assert_eq!(key.account.as_ref().map(|a| a.as_str()), Some("tenant-2"));
    life.store_signed_in(
        &key,
        &provider,
        &with_account("second", second),
        1_800_000_001,
    )
    .await
    .unwrap();
    let listed = grants.list(&principal, &provider_id()).await.unwrap();
    let ids: Vec<&str> = listed
        .iter()
        .map(|(_, g)| g.account_id().map_or("", |a| a.as_str()))
        .collect();
    assert_eq!(ids, ["tenant-1", "tenant-2"], "oldest connection first");
    assert_ne!(listed[0].1.connection_id, listed[1].1.connection_id);

    // Each is read by its own key.
    let (k2, g2) = &listed[1];
    assert_eq!(
        grants.get(k2).await.unwrap().unwrap().tokens.access_token,
        "second"
    );

    // Removing one leaves the other.
    assert!(
        life.disconnect(k2, g2, "test", 1_800_000_002)
            .await
            .unwrap()
    );
    let left = grants.list(&principal, &provider_id()).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].1.account_id().map(|a| a.as_str()), Some("tenant-1"));
    fresh.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    an_old_grant_migrates_and_another_account_adds_a_connection(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    an_old_grant_migrates_and_another_account_adds_a_connection(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis() {
    an_old_grant_migrates_and_another_account_adds_a_connection(Backend::Redis).await;
}
