use super::*;
use crate::store;

fn limits(per_principal: u32) -> Limits {
    Limits {
        mcp_per_principal: per_principal,
        mcp_per_ip: 1000,
        browser_per_ip: 1000,
        demo_per_ip: 1000,
        trusted_proxies: Vec::new(),
        max_pending_flows: 5,
    }
}

async fn sqlite_counters(dir: &tempfile::TempDir) -> Arc<dyn CounterBackend> {
    let url = format!("sqlite://{}", dir.path().join("g.db").display());
    Arc::new(sql::SqliteCounters::new(
        store::sqlite_pool(&url).await.unwrap(),
    ))
}

#[tokio::test]
async fn a_limit_admits_exactly_its_count_then_refuses_with_the_rest_of_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let limiter = Limiter::start(sqlite_counters(&dir).await, limits(3));
    for _ in 0..3 {
        assert_eq!(limiter.admit(Bucket::McpPrincipal, b"alice"), Ok(()));
    }
    let Err(RetryAfter(secs)) = limiter.admit(Bucket::McpPrincipal, b"alice") else {
        panic!("the fourth request is refused");
    };
    assert!((1..=60).contains(&secs), "{secs}");
    assert_eq!(
        limiter.admit(Bucket::McpPrincipal, b"bob"),
        Ok(()),
        "others are unaffected"
    );
}

#[tokio::test]
async fn replicas_sharing_a_store_share_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let a = Limiter::start(sqlite_counters(&dir).await, limits(4));
    let b = Limiter::start(sqlite_counters(&dir).await, limits(4));
    let alice = |limiter: &Limiter| limiter.admit(Bucket::McpPrincipal, b"alice");
    assert!(alice(&a).is_ok() && alice(&a).is_ok());
    tokio::time::sleep(FLUSH_EVERY * 3).await;
    assert!(alice(&b).is_ok() && alice(&b).is_ok());
    tokio::time::sleep(FLUSH_EVERY * 3).await;
    // Unless the window turned meanwhile, both have learnt the total of four.
    let window_turned = unix_now() % WINDOW_SECS < 2;
    if !window_turned {
        assert!(alice(&a).is_err(), "replica A sees B's requests");
        assert!(alice(&b).is_err(), "replica B sees A's requests");
    }
}

#[tokio::test]
async fn every_bucket_has_its_own_counters() {
    let dir = tempfile::tempdir().unwrap();
    let limiter = Limiter::start(sqlite_counters(&dir).await, limits(1));
    for bucket in [
        Bucket::McpPrincipal,
        Bucket::McpAddress,
        Bucket::BrowserAddress,
        Bucket::DemoAddress,
    ] {
        assert_eq!(limiter.admit(bucket, b"same"), Ok(()), "{bucket:?}");
    }
}
