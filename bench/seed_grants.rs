//! Fills a store with grants for the benchmark's scale scenario: `COUNT` synthetic users, each
//! with a demo grant sealed exactly as grantry seals one (tokens of realistic length), written
//! through grantry's own grant store.
//!
//! `GRANTRY_KEYS=… seed_grants STORE_URL STORE_PREFIX FROM COUNT` writes users FROM..FROM+COUNT
//! (so a store can be grown in steps) and prints how long it took.

// Benchmark scaffolding, not product: an unwrap that fails is the run's failure, and nothing
// here is anyone's API.
#![allow(clippy::unwrap_used, unreachable_pub)]

use std::time::Instant;

use futures::StreamExt;
use grantry::config::{Config, ServeArgs};
use grantry::connections::{Lifecycle, LifecycleSettings};
use grantry::grants::GrantKey;
use grantry::identity::{DEV_ISSUER, Principal};
use grantry::providers::oauth::TokenSet;

/// Writes in flight at once: enough to keep a network store busy.
const CONCURRENCY: usize = 64;

#[tokio::main]
async fn main() {
    grantry_base::net::install_tls_provider();
    let mut args = std::env::args().skip(1);
    let store = args.next().expect("STORE_URL");
    let prefix = args.next().expect("STORE_PREFIX");
    let from: u64 = args.next().and_then(|a| a.parse().ok()).expect("FROM");
    let count: u64 = args.next().and_then(|a| a.parse().ok()).expect("COUNT");
    let data_dir = tempfile::tempdir().expect("a scratch data directory");
    // GRANTRY_KEYS, when set, is read from the environment as `grantry serve` reads it.
    let flags = ServeArgs::from_flags([
        "--store",
        &store,
        "--store-prefix",
        &prefix,
        "--data-dir",
        data_dir.path().to_str().expect("a UTF-8 path"),
    ])
    .expect("valid store flags");
    let config = Config::resolve(flags).expect("a valid store configuration");
    let grants = grantry::startup::maintenance_grants(&config)
        .await
        .expect("the store opens");
    let grants = Lifecycle::new(grants, LifecycleSettings::default());
    let demo =
        grantry::providers::Catalog::demo_entry("http://127.0.0.1/demo").expect("the demo entry");
    let started = Instant::now();
    let now = grantry_base::clock::unix_now();
    futures::stream::iter(from..from + count)
        .for_each_concurrent(CONCURRENCY, |i| {
            let (grants, demo) = (&grants, &demo);
            async move {
                let key = GrantKey {
                    principal: Principal {
                        issuer: DEV_ISSUER.to_owned(),
                        subject: format!("bench-user-{i:08}"),
                    },
                    provider: "demo".parse().expect("a provider id"),
                    account: None,
                };
                let tokens = TokenSet {
                    access_token: format!("{i:0>180}").into(),
                    refresh_token: Some(format!("{i:0>120}").into()),
                    expires_at: now + 86_400,
                    scopes: vec!["invoices:read".to_owned()],
                    account: None,
                    previous_refresh_token: None,
                    rotated_at: None,
                };
                grants
                    .store_signed_in(&key, demo, &tokens, now)
                    .await
                    .unwrap_or_else(|e| panic!("writing grant {i}: {e}"));
            }
        })
        .await;
    println!(
        r#"{{"written":{count},"seconds":{:.1}}}"#,
        started.elapsed().as_secs_f64()
    );
}
