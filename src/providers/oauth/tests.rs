use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::*;
use crate::providers::Catalog;

fn demo() -> OAuthClient {
    demo_provider()
        .oauth()
        .expect("the demo signs in with OAuth")
        .clone()
}

fn demo_provider() -> crate::providers::Provider {
    Catalog::load(Some("http://127.0.0.1:8080/demo"), None, &[])
        .unwrap()
        .default_provider()
        .clone()
}

fn all_scopes() -> Vec<String> {
    demo_provider().scopes_for(crate::access::Access::Write)
}

fn query(url: &str) -> HashMap<String, String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

#[test]
fn pkce_is_s256_over_a_fresh_43_character_verifier() {
    let provider = demo();
    let mut seen = HashSet::new();
    for _ in 0..1000 {
        let start = authorize(
            &provider,
            &all_scopes(),
            "http://127.0.0.1:8080/oauth/callback",
            "st",
        )
        .unwrap();
        let verifier = start.pkce_verifier.unwrap();
        assert_eq!(verifier.len(), 43);
        assert!(
            verifier
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
        );
        let q = query(&start.url);
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(
            q["code_challenge"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
        );
        assert_eq!(q["state"], "st");
        assert_eq!(q["redirect_uri"], "http://127.0.0.1:8080/oauth/callback");
        assert_eq!(q["scope"], "invoices:read invoices:write");
        assert!(seen.insert(verifier), "verifiers never repeat");
    }
}

#[test]
fn a_provider_without_pkce_gets_no_challenge() {
    let mut provider = demo();
    provider.pkce = PkceMode::Off;
    let start = authorize(
        &provider,
        &all_scopes(),
        "http://127.0.0.1:8080/oauth/callback",
        "st",
    )
    .unwrap();
    assert!(start.pkce_verifier.is_none());
    assert!(!query(&start.url).contains_key("code_challenge"));
}

#[test]
fn token_sets_never_print_their_secrets() {
    let tokens = TokenSet {
        access_token: "access-secret".into(),
        refresh_token: Some("refresh-secret".into()),
        expires_at: 1,
        scopes: vec![],
        account: None,
        previous_refresh_token: None,
        rotated_at: None,
    };
    let printed = format!("{tokens:?}");
    assert!(!printed.contains("secret"), "{printed}");
}
