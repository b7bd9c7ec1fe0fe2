//! Opening each backend fresh for one test, and cleaning up after it.

use grantry_test_servers as servers;

use grantry::startup::Stores;

pub enum Backend {
    Sqlite,
    Postgres,
    Redis,
}

/// A store opened for one test; `finish` removes what it wrote.
pub struct Fresh {
    pub stores: Stores,
    cleanup: Cleanup,
}

enum Cleanup {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Database(#[allow(dead_code)] servers::TempDatabase),
    Prefix(#[allow(dead_code)] servers::TempPrefix),
}

impl Backend {
    pub async fn open(self) -> Option<Fresh> {
        match self {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("store.db").display());
                let stores = grantry::startup::open_stores(
                    &url.parse().unwrap(),
                    grantry::store::DEFAULT_REDIS_PREFIX,
                )
                .await
                .unwrap();
                Some(Fresh {
                    stores,
                    cleanup: Cleanup::Dir(dir),
                })
            }
            Backend::Postgres => {
                let database = servers::fresh_postgres().await?;
                let stores = grantry::startup::open_stores(
                    &database.url.parse().unwrap(),
                    grantry::store::DEFAULT_REDIS_PREFIX,
                )
                .await
                .unwrap();
                Some(Fresh {
                    stores,
                    cleanup: Cleanup::Database(database),
                })
            }
            Backend::Redis => {
                if !servers::redis_available().await {
                    return None;
                }
                let prefix = format!("grantry-test-{}:", servers::random_suffix());
                let stores =
                    grantry::startup::open_stores(&servers::redis_url().parse().unwrap(), &prefix)
                        .await
                        .unwrap();
                Some(Fresh {
                    stores,
                    cleanup: Cleanup::Prefix(servers::TempPrefix { prefix }),
                })
            }
        }
    }
}

impl Fresh {
    /// Closes the store, then removes what the test wrote (the guard does it on drop too,
    /// so a failing test cleans up as well).
    pub async fn finish(self) {
        drop(self.stores);
        drop(self.cleanup);
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
