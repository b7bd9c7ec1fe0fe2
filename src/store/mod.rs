//! Opening the store named by `--store` (SQLite, PostgreSQL or Redis) and the error every
//! backend reports.
//!
//! One small trait per concern lives beside its data (`flows::FlowBackend`,
//! `grants::GrantBackend`); this module picks the backend and runs its migrations.

mod bus_postgres;
mod bus_redis;
pub mod durability;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::flows::{
    FlowBackend,
    redis::RedisFlows,
    sql::{PostgresFlows, SqliteFlows},
};
use crate::grants::{
    EventBus, GrantBackend,
    redis::RedisGrants,
    sql::{PostgresGrants, SqliteGrants},
};
use crate::leases::{
    LeaseBackend,
    redis::RedisLeases,
    sql::{PostgresLeases, SqliteLeases},
};
use crate::limits::{
    CounterBackend,
    redis::RedisCounters,
    sql::{PostgresCounters, SqliteCounters},
};
use crate::sessions::{
    SessionBackend,
    redis::RedisSessions,
    sql::{PostgresSessions, SqliteSessions},
};

/// Declares a backend type holding one SQL pool (`new(pool)`); each SQL backend macro starts
/// with it, once per pool type.
macro_rules! pool_backend {
    ($(#[$doc:meta])* $name:ident, $pool:ty) => {
        $(#[$doc])*
        pub struct $name {
            pool: $pool,
        }

        impl $name {
            pub fn new(pool: $pool) -> Self {
                Self { pool }
            }
        }
    };
}
pub(crate) use pool_backend;

/// A store operation that failed. The message never carries a secret.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store holds an unreadable record: {0}")]
    Corrupt(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Unavailable(e.to_string())
    }
}

impl From<redis::RedisError> for StoreError {
    fn from(e: redis::RedisError) -> Self {
        StoreError::Unavailable(e.to_string())
    }
}

/// The backends behind one `--store` URL.
#[derive(Clone)]
pub struct Stores {
    pub flows: Arc<dyn FlowBackend>,
    pub grants: Arc<dyn GrantBackend>,
    /// How grant events reach other replicas (`None`: one process, SQLite).
    pub bus: Option<Arc<dyn EventBus>>,
    /// Rate-limit counters shared by the replicas.
    pub counters: Arc<dyn CounterBackend>,
    /// Exclusive leases shared by the replicas.
    pub leases: Arc<dyn LeaseBackend>,
    /// Legacy-era MCP sessions shared by the replicas.
    pub sessions: Arc<dyn SessionBackend>,
}

/// How long a request waits for a store connection before failing (then a 503, not a hang).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// Opens the store named by `url` (`sqlite:`, `postgres:`/`postgresql:`, `redis:`/`rediss:`)
/// and brings its schema up to date. Redis keys start with `redis_prefix`.
pub async fn open(url: &str) -> Result<Stores, StoreError> {
    open_with_prefix(url, DEFAULT_REDIS_PREFIX).await
}

/// The store URL as logs may show it: no credentials, no query (which may carry some).
pub fn loggable_url(url: &str) -> String {
    let url = url.split('?').next().unwrap_or_default();
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://…@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// The key prefix of every Redis key grantry writes.
pub const DEFAULT_REDIS_PREFIX: &str = "grantry:";

pub async fn open_with_prefix(url: &str, redis_prefix: &str) -> Result<Stores, StoreError> {
    let scheme = url.split(':').next().unwrap_or_default();
    match scheme {
        "sqlite" => open_sqlite(url).await,
        "postgres" | "postgresql" => open_postgres(url).await,
        "redis" | "rediss" => open_redis(url, redis_prefix).await,
        other => Err(StoreError::Unavailable(format!(
            "unknown store scheme `{other}`: use sqlite://, postgres:// or redis://"
        ))),
    }
}

async fn open_postgres(url: &str) -> Result<Stores, StoreError> {
    // A slow database ends a statement after a bound, as a dead one ends an acquire.
    let options =
        sqlx::postgres::PgConnectOptions::from_str(url)?.options([("statement_timeout", "5s")]);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(10)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await?;
    sqlx::migrate!("migrations/postgres")
        .run(&pool)
        .await
        .map_err(|e| StoreError::Unavailable(format!("migrations: {e}")))?;
    Ok(Stores {
        flows: Arc::new(PostgresFlows::new(pool.clone())),
        grants: Arc::new(PostgresGrants::new(pool.clone())),
        counters: Arc::new(PostgresCounters::new(pool.clone())),
        leases: Arc::new(PostgresLeases::new(pool.clone())),
        sessions: Arc::new(PostgresSessions::new(pool.clone())),
        bus: Some(Arc::new(bus_postgres::PostgresBus::new(pool))),
    })
}

async fn open_redis(url: &str, prefix: &str) -> Result<Stores, StoreError> {
    let client = redis::Client::open(url)?;
    let bus_client = client.clone();
    // Fail fast while Redis is away (a 503 now beats a hung request) and reconnect in the
    // background: one retry, a short backoff, bounded timeouts.
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(1)))
        .set_response_timeout(Some(ACQUIRE_TIMEOUT))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(500));
    let conn = redis::aio::ConnectionManager::new_with_config(client, config).await?;
    Ok(Stores {
        flows: Arc::new(RedisFlows::new(conn.clone(), prefix)),
        grants: Arc::new(RedisGrants::new(conn.clone(), prefix)),
        counters: Arc::new(RedisCounters::new(conn.clone(), prefix)),
        leases: Arc::new(RedisLeases::new(conn.clone(), prefix)),
        sessions: Arc::new(RedisSessions::new(conn.clone(), prefix)),
        bus: Some(Arc::new(bus_redis::RedisBus::new(bus_client, conn, prefix))),
    })
}

async fn open_sqlite(url: &str) -> Result<Stores, StoreError> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| StoreError::Unavailable(format!("bad SQLite URL: {e}")))?;
    make_private(options.get_filename())?;
    let options = options
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // FULL: a grant shown as connected survives a power cut, not only a crash.
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(Duration::from_secs(5));
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await?;
    sqlx::migrate!("migrations/sqlite")
        .run(&pool)
        .await
        .map_err(|e| StoreError::Unavailable(format!("migrations: {e}")))?;
    Ok(Stores {
        flows: Arc::new(SqliteFlows::new(pool.clone())),
        grants: Arc::new(SqliteGrants::new(pool.clone())),
        counters: Arc::new(SqliteCounters::new(pool.clone())),
        leases: Arc::new(SqliteLeases::new(pool.clone())),
        sessions: Arc::new(SqliteSessions::new(pool)),
        bus: None,
    })
}

/// The SQLite file and its companions 0600: tokens are sealed, but who connected what is not.
fn make_private(database: &std::path::Path) -> Result<(), StoreError> {
    if database.as_os_str().is_empty() || database.to_string_lossy().starts_with(':') {
        return Ok(()); // in memory
    }
    let unavailable =
        |e: std::io::Error| StoreError::Unavailable(format!("{}: {e}", database.display()));
    crate::data_dir::private_file(database).map_err(unavailable)?;
    for suffix in ["-wal", "-shm"] {
        let mut companion = database.as_os_str().to_owned();
        companion.push(suffix);
        crate::data_dir::tighten(std::path::Path::new(&companion), 0o600).map_err(unavailable)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn logged_store_urls_carry_no_credentials() {
        use super::loggable_url;
        assert_eq!(
            loggable_url("postgres://app:s3cret@db.example:5432/grantry?sslmode=require"),
            "postgres://…@db.example:5432/grantry"
        );
        assert_eq!(
            loggable_url("redis://:pw@cache:6379/0"),
            "redis://…@cache:6379/0"
        );
        assert_eq!(
            loggable_url("sqlite://./grantry-data/grantry.db"),
            "sqlite://./grantry-data/grantry.db"
        );
    }
}
