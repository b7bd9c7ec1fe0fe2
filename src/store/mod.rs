//! The store's foundations, below every concern that keeps data in it: the error every backend
//! reports, the connections (a SQLite or PostgreSQL pool with its schema migrated, a Redis
//! connection), and the durability checks at start.
//!
//! One small trait per concern lives beside its data (`flows::FlowBackend`,
//! `grants::GrantBackend`, …), with one file per backend; `startup` builds the backends of the
//! `--store` URL on these connections.

pub(crate) mod durability;
pub mod redis;
mod url;

pub(crate) use self::redis::{RedisConn, Replication};
pub use url::StoreUrl;

use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

/// Declares a backend type holding one SQL pool (`new(pool)`); each SQL backend macro starts
/// with it, once per pool type.
macro_rules! pool_backend {
    ($(#[$doc:meta])* $name:ident, $pool:ty) => {
        $(#[$doc])*
        pub(crate) struct $name {
            pool: $pool,
        }

        impl $name {
            pub(crate) fn new(pool: $pool) -> Self {
                Self { pool }
            }
        }
    };
}
pub(crate) use pool_backend;

/// A store operation that failed, with its cause. The message never carries a secret: the
/// drivers' messages name what failed (a refused connection, a timeout, the server's error
/// text), never the URL's credentials, and grantry shows store URLs only through
/// [`StoreUrl`]'s `Display`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store unavailable: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("store unavailable: {0}")]
    Redis(#[from] ::redis::RedisError),
    #[error("store schema could not be brought up to date: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// Anything else that keeps the store away (a file that cannot be made private, a
    /// background task that failed).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store holds an unreadable record: {0}")]
    Corrupt(String),
    /// A value sealed under a key this replica's ring lacks: the replicas' keys differ, which
    /// no retry mends (not an outage).
    #[error(
        "{what} is sealed under key {key_id}, which this replica's key ring (--keys, \
         GRANTRY_KEYS) lacks: give every replica the same keys"
    )]
    Unopenable { what: String, key_id: String },
    /// A write too few replicas acknowledged in time (`--redis-min-replicas`): it may be
    /// lost in a failover, so nobody is told it was made.
    #[error("store did not confirm the write: {0}")]
    NotReplicated(String),
}

/// How long a request waits for a store connection before failing (then a 503, not a hang).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// The key prefix of every Redis key grantry writes.
pub(crate) const DEFAULT_REDIS_PREFIX: &str = "grantry:";

/// A PostgreSQL pool with the schema brought up to date.
pub async fn postgres_pool(url: &str) -> Result<sqlx::PgPool, StoreError> {
    // A slow database ends a statement after a bound, as a dead one ends an acquire.
    let options =
        sqlx::postgres::PgConnectOptions::from_str(url)?.options([("statement_timeout", "5s")]);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(10)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options.clone())
        .await?;
    migrate_postgres(&options).await?;
    Ok(pool)
}

/// Brings the schema up to date on a connection of its own, which hears the server's
/// warnings and errors but not its notices: sqlx creates its bookkeeping table with `IF NOT
/// EXISTS` on every start, and PostgreSQL's notice that it already exists would otherwise be
/// logged by every replica's start and every operator's command.
async fn migrate_postgres(options: &sqlx::postgres::PgConnectOptions) -> Result<(), StoreError> {
    use sqlx::Connection as _;
    let quiet = options
        .clone()
        .options([("client_min_messages", "warning")]);
    let mut conn = sqlx::PgConnection::connect_with(&quiet).await?;
    sqlx::migrate!("migrations/postgres").run(&mut conn).await?;
    conn.close().await?;
    Ok(())
}

/// Two PostgreSQL connections, opened when first used, whose commits do not wait for the
/// disk: for writes a crash may lose at no cost (the outbox's claims and outcomes), each
/// then one statement and one round trip. The schema is `postgres_pool`'s.
pub(crate) fn postgres_relaxed_pool(url: &str) -> Result<sqlx::PgPool, StoreError> {
    let options = sqlx::postgres::PgConnectOptions::from_str(url)?
        .options([("statement_timeout", "5s"), ("synchronous_commit", "off")]);
    Ok(sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_lazy_with(options))
}

/// A SQLite pool with the schema brought up to date; the file is private to grantry's user.
pub async fn sqlite_pool(url: &str) -> Result<sqlx::SqlitePool, StoreError> {
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
    sqlx::migrate!("migrations/sqlite").run(&pool).await?;
    Ok(pool)
}

/// The SQLite file and its companions 0600: tokens are sealed, but who connected what is not.
fn make_private(database: &std::path::Path) -> Result<(), StoreError> {
    if database.as_os_str().is_empty() || database.to_string_lossy().starts_with(':') {
        return Ok(()); // in memory
    }
    let unavailable =
        |e: std::io::Error| StoreError::Unavailable(format!("{}: {e}", database.display()));
    grantry_base::private_files::private_file(database).map_err(unavailable)?;
    for suffix in ["-wal", "-shm"] {
        let mut companion = database.as_os_str().to_owned();
        companion.push(suffix);
        grantry_base::private_files::tighten(std::path::Path::new(&companion), 0o600)
            .map_err(unavailable)?;
    }
    Ok(())
}
