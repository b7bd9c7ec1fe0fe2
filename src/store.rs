//! Opening the store named by `--store` and the error every backend reports.
//!
//! One small trait per concern lives beside its data (`flows::FlowBackend`,
//! `grants::GrantBackend`); this module picks the backend and runs its migrations.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::flows::{FlowBackend, sqlite::SqliteFlows};
use crate::grants::{GrantBackend, sqlite::SqliteGrants};

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

/// The backends behind one `--store` URL.
#[derive(Clone)]
pub struct Stores {
    pub flows: Arc<dyn FlowBackend>,
    pub grants: Arc<dyn GrantBackend>,
}

/// How long a request waits for a store connection before failing (then a 503, not a hang).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// Opens the store and brings its schema up to date.
pub async fn open(url: &str) -> Result<Stores, StoreError> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| StoreError::Unavailable(format!("bad SQLite URL: {e}")))?
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
        grants: Arc::new(SqliteGrants::new(pool)),
    })
}
