//! The PostgreSQL and Redis servers tests use, each test with its own database or key prefix.
//!
//! `GRANTRY_TEST_POSTGRES` (default `postgres://postgres@127.0.0.1:5432/postgres`) and
//! `GRANTRY_TEST_REDIS` (default `redis://127.0.0.1:6379`). A missing server makes a test say
//! it skipped and why; under `CI=true` it fails the run instead.
//!
//! Test scaffolding: an unwrap that fails is the test's failure.

use sqlx::Connection;

pub fn postgres_admin_url() -> String {
    std::env::var("GRANTRY_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

pub fn redis_url() -> String {
    std::env::var("GRANTRY_TEST_REDIS").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

pub fn random_suffix() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// Says a test was skipped for want of a server; panics under `CI=true`.
pub fn skip(server: &str, why: impl std::fmt::Display) {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{server} is required under CI=true: {why}");
    }
    eprintln!("SKIPPED {server}: {why} (start the server, or set GRANTRY_TEST_*)");
}

/// Runs `cleanup` to completion from a `Drop`, on a runtime of its own: a test that fails
/// half-way still removes what it made.
fn clean_up_on_drop(cleanup: impl std::future::Future<Output = ()> + Send + 'static) {
    let _ = std::thread::spawn(move || {
        if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            runtime.block_on(cleanup);
        }
    })
    .join();
}

/// A database made for one test, dropped when this is.
pub struct TempDatabase {
    pub url: String,
    pub name: String,
}

impl Drop for TempDatabase {
    fn drop(&mut self) {
        let name = self.name.clone();
        clean_up_on_drop(async move { drop_postgres(&name).await });
    }
}

/// Redis keys made for one test (under `prefix`), deleted when this is dropped.
pub struct TempPrefix {
    pub prefix: String,
}

impl Drop for TempPrefix {
    fn drop(&mut self) {
        let prefix = self.prefix.clone();
        clean_up_on_drop(async move { drop_redis_prefix(&prefix).await });
    }
}

/// A fresh database, dropped again when the guard is.
pub async fn fresh_postgres() -> Option<TempDatabase> {
    let admin_url = postgres_admin_url();
    let mut admin = match sqlx::PgConnection::connect(&admin_url).await {
        Ok(c) => c,
        Err(e) => {
            skip("PostgreSQL", e);
            return None;
        }
    };
    let name = format!("grantry_test_{}", random_suffix());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    let mut url = url::Url::parse(&admin_url).unwrap();
    url.set_path(&name);
    Some(TempDatabase {
        url: url.to_string(),
        name,
    })
}

pub async fn drop_postgres(name: &str) {
    let mut admin = sqlx::PgConnection::connect(&postgres_admin_url())
        .await
        .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
}

/// The store URL of a Redis topology `tests/servers/redis-topologies` started (which
/// `scripts/test` does): Sentinel's (`GRANTRY_TEST_REDIS_SENTINEL`), or a Redis Cluster's
/// (`GRANTRY_TEST_REDIS_CLUSTER`); `None`, saying why, when it is not there. Each test keeps to
/// a key prefix of its own; the topology's data goes with it when it stops.
pub fn redis_topology(variable: &str) -> Option<String> {
    match std::env::var(variable) {
        Ok(url) => Some(url),
        Err(_) => {
            skip(
                variable,
                "not set: start the topologies with tests/servers/redis-topologies start DIR",
            );
            None
        }
    }
}

/// Whether the Redis answers; says why not.
pub async fn redis_available() -> bool {
    let attempt = async {
        let client = redis::Client::open(redis_url())?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<()>(&mut conn).await
    };
    match attempt.await {
        Ok(()) => true,
        Err(e) => {
            skip("Redis", e);
            false
        }
    }
}

/// Deletes every key under `prefix`.
pub async fn drop_redis_prefix(prefix: &str) {
    let client = redis::Client::open(redis_url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut conn)
        .await
        .unwrap();
    if !keys.is_empty() {
        redis::cmd("DEL")
            .arg(keys)
            .query_async::<()>(&mut conn)
            .await
            .unwrap();
    }
}

/// `--store` arguments for a fresh PostgreSQL database, and its guard.
pub async fn postgres_store() -> Option<(Vec<String>, TempDatabase)> {
    let database = fresh_postgres().await?;
    Some((vec!["--store".into(), database.url.clone()], database))
}

/// `--store` arguments for the shared Redis under a fresh prefix, and its guard. The CI Redis
/// keeps nothing on disk, so they accept a volatile store.
pub async fn redis_store() -> Option<(Vec<String>, TempPrefix)> {
    if !redis_available().await {
        return None;
    }
    let prefix = format!("grantry-e2e-{}:", random_suffix());
    let args = vec![
        "--store".into(),
        redis_url(),
        "--store-prefix".into(),
        prefix.clone(),
        "--allow-volatile-store".into(),
        "true".into(),
    ];
    Some((args, TempPrefix { prefix }))
}

/// `--store` arguments for the run's Redis Cluster (`GRANTRY_TEST_REDIS_CLUSTER`) under a
/// fresh prefix; its nodes are durable, and its data goes when the topology stops.
pub fn redis_cluster_store() -> Option<Vec<String>> {
    let url = redis_topology("GRANTRY_TEST_REDIS_CLUSTER")?;
    let prefix = format!("grantry-e2e-{}:", random_suffix());
    Some(vec!["--store".into(), url, "--store-prefix".into(), prefix])
}

/// Borrows owned arguments as the `&[&str]` the server helpers take.
pub fn as_strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}
