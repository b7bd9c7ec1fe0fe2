//! The keep-alive's pass over a large store (BENCHMARKS.md, "Keep-alive and outbox"): COUNT
//! grants, all due at once, as every row is right after the upgrade that added the keep-alive
//! index, none needing a refresh yet, so the scheduler reads each and files it for later.
//! That is the most the scheduler ever reads: in steady state a round reads only the grants
//! whose time has come.
//!
//! `keepalive_scan STORE_URL COUNT` seeds a (fresh) PostgreSQL or Redis store: 1 000 grants
//! through grantry's own writes, then copies of the first up to COUNT, in bulk (their sealed
//! tokens are bound to the original row and would not open, which is the point: a look that
//! only reschedules never opens tokens). It marks them all due, runs scheduler rounds (as one
//! replica would, lease included) until none is left, and prints one JSON line: grants looked
//! at, seconds, grants per second, this process's peak RSS during the pass (reset after
//! seeding), the store's work per grant (PostgreSQL: transactions; Redis: commands, those run
//! by scripts included, and one state count), how long a round with nothing due takes, and
//! how long the state gauges' count takes.

// Benchmark scaffolding, not product: an unwrap that fails is the run's failure, nothing here
// is anyone's API, and a run reads top to bottom, however long.
#![allow(clippy::unwrap_used, unreachable_pub, clippy::too_many_lines)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use grantry::config::KeepAlive as Pace;
use grantry::connections::keepalive::KeepAlive;
use grantry::connections::{Lifecycle, LifecycleSettings, TokenKeeper};
use grantry::grants::{GrantEvents, GrantKey, Grants};
use grantry::identity::{DEV_ISSUER, Principal};
use grantry::providers::oauth::TokenSet;
use grantry::providers::{Provider, SignIn};
use grantry::seal::{KeyRing, Sealer};
use grantry::store::StoreUrl;
use grantry::store::redis::layout::{Bucket, Keys};

const PREFIX: &str = "grantry-bench-ka:";
const SEED_CONCURRENCY: usize = 64;
/// Grants written through grantry; the rest are copies.
const THROUGH_GRANTRY: u64 = 1000;

#[tokio::main]
async fn main() {
    grantry_base::net::install_tls_provider();
    let mut args = std::env::args().skip(1);
    let url: StoreUrl = args.next().expect("STORE_URL").parse().unwrap();
    let count: u64 = args.next().and_then(|a| a.parse().ok()).expect("COUNT");
    clear_redis_prefix(&url).await;
    let stores = grantry::startup::open_stores(&url, PREFIX).await.unwrap();
    let sealer = Arc::new(Sealer::new(
        KeyRing::from_keys(&[[9; 32]]).unwrap(),
        "http://127.0.0.1/mcp",
    ));
    let grants = Grants::new(stores.grants.clone(), sealer, GrantEvents::new(None));
    // Xero's window, so nothing is due for refresh: the pass only reads and reschedules.
    let mut provider = grantry::providers::Catalog::demo_entry("http://127.0.0.1/demo").unwrap();
    if let SignIn::OAuth(oauth) = &mut provider.sign_in {
        oauth.refresh_idle_secs = Some(60 * 86_400);
    }
    let seeding = Instant::now();
    seed(&grants, &provider, count.min(THROUGH_GRANTRY)).await;
    copy_first(&url, count).await;
    let seeded_secs = seeding.elapsed().as_secs_f64();
    mark_all_due(&url).await;

    let keepalive = KeepAlive::new(
        TokenKeeper {
            lifecycle: Lifecycle::new(grants.clone(), LifecycleSettings::default()),
            leases: stores.leases.clone(),
            http: grantry::providers::http::client(),
            redirect_uri: "http://127.0.0.1/oauth/callback".into(),
        },
        vec![provider],
        Pace {
            interval: Duration::from_secs(10),
            concurrency: 16,
            rate_per_provider: 5,
        },
        30 * 86_400,
    );
    reset_peak_rss();
    let rss_before = rss_kib("VmRSS");
    let work_before = store_work(&url).await;
    let started = Instant::now();
    let mut looked_at = 0;
    loop {
        let report = keepalive.round().await.unwrap();
        if report.looked_at == 0 {
            break;
        }
        looked_at += report.looked_at;
    }
    let seconds = started.elapsed().as_secs_f64();
    let work = store_work(&url).await - work_before;
    let idle = Instant::now();
    keepalive.round().await.unwrap();
    let idle_round_ms = idle.elapsed().as_secs_f64() * 1000.0;
    // The state gauges' count (every tenth round): on Redis it reads every grant.
    let counting = Instant::now();
    grants.count_by_state().await.unwrap();
    let state_count_ms = counting.elapsed().as_secs_f64() * 1000.0;
    // A shared Redis is left as it was found (PostgreSQL: the harness drops the database).
    clear_redis_prefix(&url).await;
    println!(
        "{{\"store\":\"{}\",\"grants\":{count},\"seeded_seconds\":{seeded_secs:.0},\"looked_at\":{looked_at},\
         \"seconds\":{seconds:.1},\"per_second\":{:.0},\"rss_kib_before\":{rss_before},\
         \"peak_rss_kib_during\":{},\"store_ops_per_grant\":{:.2},\"idle_round_ms\":{idle_round_ms:.2},\
         \"state_count_ms\":{state_count_ms:.0}}}",
        match url {
            StoreUrl::Postgres(_) => "postgres",
            StoreUrl::Redis(_) => "redis",
            StoreUrl::Sqlite(_) => "sqlite",
        },
        looked_at as f64 / seconds,
        rss_kib("VmHWM"),
        work / looked_at.max(1) as f64,
    );
}

async fn seed(grants: &Grants, provider: &Provider, count: u64) {
    let now = grantry_base::clock::unix_now();
    let writes = &Lifecycle::new(grants.clone(), LifecycleSettings::default());
    futures::stream::iter(0..count)
        .for_each_concurrent(SEED_CONCURRENCY, |i| async move {
            let key = user(i);
            let tokens = TokenSet {
                access_token: format!("{i:0>180}").into(),
                refresh_token: Some(format!("{i:0>120}").into()),
                expires_at: now + 86_400,
                scopes: vec!["invoices:read".to_owned()],
                account: None,
                previous_refresh_token: None,
                rotated_at: None,
            };
            writes
                .store_signed_in(&key, provider, &tokens, now)
                .await
                .unwrap();
        })
        .await;
}

fn user(i: u64) -> GrantKey {
    GrantKey {
        principal: Principal {
            issuer: DEV_ISSUER.to_owned(),
            subject: format!("bench-user-{i:08}"),
        },
        provider: "demo".parse().unwrap(),
        account: None,
    }
}

/// Grows the store to `count` grants with copies of the first one's row.
async fn copy_first(url: &StoreUrl, count: u64) {
    if count <= THROUGH_GRANTRY {
        return;
    }
    match url {
        StoreUrl::Postgres(text) => {
            let pool = sqlx::PgPool::connect(text).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO grants (principal_iss, principal_sub, provider, tokens_sealed, \
                 access_expires_at, scopes, version, created_at, updated_at, key_id, connection_id, \
                 state, health, keepalive_at, used_at) \
                 SELECT principal_iss, 'bench-user-' || lpad(g::text, 8, '0'), provider, tokens_sealed, \
                 access_expires_at, scopes, version, created_at, updated_at, key_id, 'conn_copy_' || g, \
                 state, health, keepalive_at, used_at \
                 FROM grants, generate_series({THROUGH_GRANTRY}, {}) g \
                 WHERE principal_sub = 'bench-user-00000000'",
                count - 1
            )))
            .execute(&pool)
            .await
            .unwrap();
            sqlx::query("ANALYZE grants").execute(&pool).await.unwrap();
        }
        StoreUrl::Redis(text) => {
            let mut conn = grantry::store::redis::RedisConn::connect(text)
                .await
                .unwrap();
            let keys = Keys::new(PREFIX);
            let first: Vec<(String, String)> = redis::cmd("HGETALL")
                .arg(keys.grant(&user(0).owner_tag(), None))
                .query_async(&mut conn)
                .await
                .unwrap();
            for from in (THROUGH_GRANTRY..count).step_by(1000) {
                let mut pipe = redis::pipe();
                for i in from..(from + 1000).min(count) {
                    let owner = user(i).owner_tag();
                    let (key, bucket) = (keys.grant(&owner, None), Bucket::of(&owner));
                    let mut fields = first.clone();
                    for (name, value) in &mut fields {
                        match name.as_str() {
                            "principal_sub" => *value = format!("bench-user-{i:08}"),
                            "connection_id" => *value = format!("conn_copy_{i}"),
                            _ => {}
                        }
                    }
                    pipe.cmd("HSET").arg(&key).arg(fields).ignore();
                    pipe.cmd("SADD").arg(keys.grants(bucket)).arg(&key).ignore();
                    pipe.cmd("ZADD")
                        .arg(keys.keepalive(bucket))
                        .arg(1)
                        .arg(&key)
                        .ignore();
                }
                pipe.query_async::<()>(&mut conn).await.unwrap();
            }
        }
        StoreUrl::Sqlite(_) => panic!("keepalive_scan measures PostgreSQL and Redis"),
    }
}

/// A Redis store starts empty: what an earlier run left under the prefix goes.
async fn clear_redis_prefix(url: &StoreUrl) {
    let StoreUrl::Redis(text) = url else { return };
    let mut conn = grantry::store::redis::RedisConn::connect(text)
        .await
        .unwrap();
    let mut cursor: u64 = 0;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{PREFIX}*"))
            .arg("COUNT")
            .arg(10_000)
            .query_async(&mut conn)
            .await
            .unwrap();
        if !keys.is_empty() {
            let _: i64 = redis::cmd("UNLINK")
                .arg(keys)
                .query_async(&mut conn)
                .await
                .unwrap();
        }
        if next == 0 {
            return;
        }
        cursor = next;
    }
}

/// Every grant due now, as rows written before the keep-alive index are.
async fn mark_all_due(url: &StoreUrl) {
    match url {
        StoreUrl::Postgres(text) => {
            // Not grantry's pool: its statements end after 5 s, and this one takes longer.
            let pool = sqlx::PgPool::connect(text).await.unwrap();
            sqlx::query("UPDATE grants SET keepalive_at = 1")
                .execute(&pool)
                .await
                .unwrap();
        }
        StoreUrl::Redis(text) => {
            let mut conn = grantry::store::redis::RedisConn::connect(text)
                .await
                .unwrap();
            let keys = Keys::new(PREFIX);
            for bucket in Bucket::all() {
                let index = keys.keepalive(bucket);
                let members: Vec<String> = redis::cmd("ZRANGE")
                    .arg(&index)
                    .arg(0)
                    .arg(-1)
                    .query_async(&mut conn)
                    .await
                    .unwrap();
                for page in members.chunks(1000) {
                    let mut pipe = redis::pipe();
                    for member in page {
                        pipe.cmd("ZADD").arg(&index).arg(1).arg(member).ignore();
                    }
                    pipe.query_async::<()>(&mut conn).await.unwrap();
                }
            }
        }
        StoreUrl::Sqlite(text) => {
            let pool = grantry::store::sqlite_pool(text).await.unwrap();
            sqlx::query("UPDATE grants SET keepalive_at = 1")
                .execute(&pool)
                .await
                .unwrap();
        }
    }
}

/// The store's own count of the work done so far: PostgreSQL transactions of this database,
/// Redis commands (SQLite: none).
async fn store_work(url: &StoreUrl) -> f64 {
    match url {
        StoreUrl::Postgres(text) => {
            // Every backend flushes its counts within 10 s of going idle.
            tokio::time::sleep(Duration::from_secs(11)).await;
            let pool = grantry::store::postgres_pool(text).await.unwrap();
            let (commits,): (i64,) = sqlx::query_as(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
            )
            .fetch_one(&pool)
            .await
            .unwrap();
            commits as f64
        }
        StoreUrl::Redis(text) => {
            let mut conn = grantry::store::redis::RedisConn::connect(text)
                .await
                .unwrap();
            let info: String = redis::cmd("INFO")
                .arg("stats")
                .query_async(&mut conn)
                .await
                .unwrap();
            info.lines()
                .find_map(|l| l.strip_prefix("total_commands_processed:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0.0)
        }
        StoreUrl::Sqlite(_) => 0.0,
    }
}

/// Resets this process's peak RSS (VmHWM) to its current RSS (Linux `clear_refs` 5).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}
