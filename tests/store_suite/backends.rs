//! Opening each backend fresh for one test, and cleaning up after it.

use grantry::store::{self, Stores};
use sqlx::Connection;

pub enum Backend {
    Sqlite,
    Postgres,
    Redis,
}

/// A store opened for one test; dropping it does not clean up, `finish` does.
pub struct Fresh {
    pub stores: Stores,
    cleanup: Cleanup,
}

enum Cleanup {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Database { admin_url: String, name: String },
    Prefix { url: String, prefix: String },
}

fn random_suffix() -> String {
    format!("{:016x}", rand::random::<u64>())
}

fn postgres_admin_url() -> String {
    std::env::var("GRANTRY_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

fn redis_url() -> String {
    std::env::var("GRANTRY_TEST_REDIS").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// `None` (with a note on stderr) when the server is missing outside CI.
fn unavailable(backend: &str, why: impl std::fmt::Display) -> Option<Fresh> {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{backend} is required under CI=true: {why}");
    }
    eprintln!("SKIPPED {backend}: {why} (start the server, or set GRANTRY_TEST_*)");
    None
}

impl Backend {
    pub async fn open(self) -> Option<Fresh> {
        match self {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("store.db").display());
                let stores = store::open(&url).await.unwrap();
                Some(Fresh {
                    stores,
                    cleanup: Cleanup::Dir(dir),
                })
            }
            Backend::Postgres => {
                let admin_url = postgres_admin_url();
                let mut admin = match sqlx::PgConnection::connect(&admin_url).await {
                    Ok(c) => c,
                    Err(e) => return unavailable("PostgreSQL", e),
                };
                let name = format!("grantry_test_{}", random_suffix());
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut admin)
                    .await
                    .unwrap();
                let mut url = url::Url::parse(&admin_url).unwrap();
                url.set_path(&name);
                let stores = store::open(url.as_str()).await.unwrap();
                Some(Fresh {
                    stores,
                    cleanup: Cleanup::Database { admin_url, name },
                })
            }
            Backend::Redis => {
                let url = redis_url();
                let prefix = format!("grantry-test-{}:", random_suffix());
                match store::open_with_prefix(&url, &prefix).await {
                    Ok(stores) => Some(Fresh {
                        stores,
                        cleanup: Cleanup::Prefix { url, prefix },
                    }),
                    Err(e) => unavailable("Redis", e),
                }
            }
        }
    }
}

impl Fresh {
    /// Removes what the test wrote: the database, or every key under the prefix.
    pub async fn finish(self) {
        match self.cleanup {
            Cleanup::Dir(_) => {}
            Cleanup::Database { admin_url, name } => {
                drop(self.stores);
                let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap();
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut admin)
                .await
                .unwrap();
            }
            Cleanup::Prefix { url, prefix } => {
                let client = redis::Client::open(url).unwrap();
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
        }
    }
}

/// Defines one `#[tokio::test]` per backend for a suite function taking `&Stores`.
#[macro_export]
macro_rules! for_each_backend {
    ($suite:ident) => {
        mod $suite {
            use $crate::backends::Backend;

            async fn run(backend: Backend) {
                let Some(fresh) = backend.open().await else {
                    return;
                };
                super::$suite(&fresh.stores).await;
                fresh.finish().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                run(Backend::Sqlite).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                run(Backend::Postgres).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis() {
                run(Backend::Redis).await;
            }
        }
    };
}
