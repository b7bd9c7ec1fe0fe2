//! Running one test body against each store: a test per store, each with that store's
//! `--store` arguments (none for SQLite, the default), skipped with a note where a server is
//! missing outside CI. The shared stores are PostgreSQL, Redis, and the Redis Cluster the
//! test stage starts.

/// The PostgreSQL and Redis tests of `$name(store_args)`, inside the module of its tests.
macro_rules! shared_store_tests {
    ($(#[$attr:meta])* $name:ident) => {
        use crate::support::servers;

        #[tokio::test]
        $(#[$attr])*
        async fn postgres() {
            let Some((args, _guard)) = servers::postgres_store().await else {
                return;
            };
            super::$name(&args).await;
        }

        #[tokio::test]
        $(#[$attr])*
        async fn redis() {
            let Some((args, _guard)) = servers::redis_store().await else {
                return;
            };
            super::$name(&args).await;
        }

        #[tokio::test]
        $(#[$attr])*
        async fn redis_cluster() {
            let Some(args) = servers::redis_cluster_store() else {
                return;
            };
            super::$name(&args).await;
        }
    };
}

/// Runs `$name(store_args)` as one test per store: SQLite, PostgreSQL and Redis.
macro_rules! on_every_store {
    ($name:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name(&[]).await;
            }

            shared_store_tests!($name);
        }
    };
}

/// Runs `$name(store_args)` as one test per shared store (PostgreSQL, Redis): for tests of
/// several replicas.
/// Attributes before the name go on each test (`#[ignore = "…"]` for a soak).
macro_rules! on_shared_stores {
    ($(#[$attr:meta])* $name:ident) => {
        mod $name {
            shared_store_tests!($(#[$attr])* $name);
        }
    };
}
