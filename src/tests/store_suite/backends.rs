//! Opening each backend fresh for one test, and cleaning up after it.

use grantry_test_servers as servers;

use crate::startup::Stores;

pub enum Backend {
    Sqlite,
    Postgres,
    Redis,
    /// The primary a Redis Sentinel names (`tests/servers/redis-topologies`).
    RedisSentinel,
    /// A Redis Cluster of three primaries (`tests/servers/redis-topologies`).
    RedisCluster,
}

/// A store opened for one test; `finish` removes what it wrote.
pub struct Fresh {
    pub stores: Stores,
    cleanup: Cleanup,
}

enum Cleanup {
    /// The SQLite file's directory, and the file's URL.
    Dir(
        #[expect(dead_code, reason = "held so the directory lives as long as the store")]
        tempfile::TempDir,
        String,
    ),
    Database(servers::TempDatabase),
    Prefix(servers::TempPrefix),
    /// A prefix on a Redis topology of the run (its URL), whose data goes when it stops.
    Topology {
        url: String,
        prefix: String,
    },
}

/// A grant row as grantry wrote it before several accounts per provider (schema 0007, Redis
/// hashes without `account`).
pub struct OldGrant {
    pub issuer: String,
    pub subject: String,
    pub provider: String,
    pub tokens_sealed: String,
    pub key_id: String,
    pub connection_id: String,
    pub version: i64,
    pub created_at: i64,
}

/// The last migration of the schema before several accounts per provider.
const BEFORE_ACCOUNTS: i64 = 7;

impl Backend {
    pub async fn open(self) -> Option<Fresh> {
        self.open_after(None).await
    }

    /// A store left by the previous grantry (its schema, `grant` written its way), then
    /// opened by this one, which migrates it.
    pub async fn open_with_old_grant(self, grant: &OldGrant) -> Option<Fresh> {
        self.open_after(Some(grant)).await
    }

    /// A fresh store, first written by the previous grantry when `old` is given.
    async fn open_after(self, old: Option<&OldGrant>) -> Option<Fresh> {
        match self {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("store.db").display());
                if let Some(grant) = old {
                    let options: sqlx::sqlite::SqliteConnectOptions = url.parse().unwrap();
                    let pool = sqlx::SqlitePool::connect_with(options.create_if_missing(true))
                        .await
                        .unwrap();
                    old_schema(&pool, "migrations/sqlite").await;
                    insert_old(&pool, grant).await;
                    pool.close().await;
                }
                Some(Fresh {
                    stores: open_stores(&url, crate::store::DEFAULT_REDIS_PREFIX).await,
                    cleanup: Cleanup::Dir(dir, url),
                })
            }
            Backend::Postgres => {
                let database = servers::fresh_postgres().await?;
                if let Some(grant) = old {
                    let pool = sqlx::PgPool::connect(&database.url).await.unwrap();
                    old_schema(&pool, "migrations/postgres").await;
                    insert_old(&pool, grant).await;
                    pool.close().await;
                }
                Some(Fresh {
                    stores: open_stores(&database.url, crate::store::DEFAULT_REDIS_PREFIX).await,
                    cleanup: Cleanup::Database(database),
                })
            }
            Backend::Redis => {
                if !servers::redis_available().await {
                    return None;
                }
                let prefix = format!("grantry-test-{}:", servers::random_suffix());
                if let Some(grant) = old {
                    hset_old(&prefix, grant).await;
                }
                Some(Fresh {
                    stores: open_stores(&servers::redis_url(), &prefix).await,
                    cleanup: Cleanup::Prefix(servers::TempPrefix { prefix }),
                })
            }
            Backend::RedisSentinel | Backend::RedisCluster => {
                let variable = match self {
                    Backend::RedisSentinel => "GRANTRY_TEST_REDIS_SENTINEL",
                    _ => "GRANTRY_TEST_REDIS_CLUSTER",
                };
                let url = servers::redis_topology(variable)?;
                // (Old grants are written to the one server only: the migration is a row's.)
                let prefix = format!("grantry-test-{}:", servers::random_suffix());
                Some(Fresh {
                    stores: open_stores(&url, &prefix).await,
                    cleanup: Cleanup::Topology { url, prefix },
                })
            }
        }
    }
}

/// This grantry's stores at `url`, migrated.
async fn open_stores(url: &str, prefix: &str) -> Stores {
    crate::startup::open_stores(&url.parse().unwrap(), prefix)
        .await
        .unwrap()
}

/// The schema as it was: the migrations up to [`BEFORE_ACCOUNTS`], from the repository.
async fn old_schema<DB>(pool: &sqlx::Pool<DB>, dir: &str)
where
    DB: sqlx::Database,
    <DB as sqlx::Database>::Connection: sqlx::migrate::Migrate,
{
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut migrator = sqlx::migrate::Migrator::new(path).await.unwrap();
    let old: Vec<_> = migrator
        .migrations
        .iter()
        .filter(|m| m.version <= BEFORE_ACCOUNTS)
        .cloned()
        .collect();
    assert_eq!(old.len() as i64, BEFORE_ACCOUNTS);
    migrator.migrations = old.into();
    migrator.run(pool).await.unwrap();
}

/// The row as the previous grantry's upsert wrote it (no `account` column then).
async fn insert_old<DB>(pool: &sqlx::Pool<DB>, g: &OldGrant)
where
    DB: sqlx::Database,
    for<'c> &'c sqlx::Pool<DB>: sqlx::Executor<'c, Database = DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    sqlx::query(
        "INSERT INTO grants (principal_iss, principal_sub, provider, tokens_sealed, \
         access_expires_at, scopes, version, created_at, updated_at, key_id, connection_id, \
         state, health, keepalive_at, used_at) \
         VALUES ($1, $2, $3, $4, 2000000000, 'accounting.invoices.read', $5, $6, $6, $7, $8, \
         'active', '{}', 0, 0)",
    )
    .bind(g.issuer.clone())
    .bind(g.subject.clone())
    .bind(g.provider.clone())
    .bind(g.tokens_sealed.clone())
    .bind(g.version)
    .bind(g.created_at)
    .bind(g.key_id.clone())
    .bind(g.connection_id.clone())
    .execute(pool)
    .await
    .unwrap();
}

/// The hash as the previous grantry wrote it: `grant:{tag of (principal, provider)}`.
async fn hset_old(prefix: &str, g: &OldGrant) {
    let principal = crate::identity::Principal {
        issuer: g.issuer.clone(),
        subject: g.subject.clone(),
    };
    let provider = g.provider.parse().unwrap();
    let tag = crate::grants::GrantKey::sole(&principal, &provider).owner_tag();
    let client = redis::Client::open(servers::redis_url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("HSET")
        .arg(format!("{prefix}grant:{{{tag}}}"))
        .arg("tokens_sealed")
        .arg(&g.tokens_sealed)
        .arg("access_expires_at")
        .arg(2_000_000_000)
        .arg("scopes")
        .arg("accounting.invoices.read")
        .arg("version")
        .arg(g.version)
        .arg("created_at")
        .arg(g.created_at)
        .arg("updated_at")
        .arg(g.created_at)
        .arg("key_id")
        .arg(&g.key_id)
        .arg("principal_iss")
        .arg(&g.issuer)
        .arg("principal_sub")
        .arg(&g.subject)
        .arg("provider")
        .arg(&g.provider)
        .arg("connection_id")
        .arg(&g.connection_id)
        .arg("state")
        .arg("active")
        .arg("health")
        .arg("{}")
        .arg("keepalive_at")
        .arg(0)
        .query_async(&mut conn)
        .await
        .unwrap();
}

impl Fresh {
    /// Whether the store still holds the lease `name`, lapsed or not: read from the store
    /// itself, not through grantry.
    pub async fn holds_lease_row(&self, name: &str) -> bool {
        let count = "SELECT COUNT(*) FROM leases WHERE name = $1";
        match &self.cleanup {
            Cleanup::Dir(_, url) => {
                let pool = sqlx::SqlitePool::connect(url).await.unwrap();
                let (n,): (i64,) = sqlx::query_as(count)
                    .bind(name)
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                pool.close().await;
                n > 0
            }
            Cleanup::Database(database) => {
                let pool = sqlx::PgPool::connect(&database.url).await.unwrap();
                let (n,): (i64,) = sqlx::query_as(count)
                    .bind(name)
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                pool.close().await;
                n > 0
            }
            Cleanup::Prefix(prefix) => {
                let client = redis::Client::open(servers::redis_url()).unwrap();
                let mut conn = client.get_multiplexed_async_connection().await.unwrap();
                let key = format!("{}lease:{{{name}}}", prefix.prefix);
                redis::cmd("EXISTS")
                    .arg(key)
                    .query_async::<i64>(&mut conn)
                    .await
                    .unwrap()
                    > 0
            }
            Cleanup::Topology { url, prefix } => {
                let mut conn = crate::store::redis::RedisConn::connect(url).await.unwrap();
                let key = format!("{prefix}lease:{{{name}}}");
                redis::cmd("EXISTS")
                    .arg(key)
                    .query_async::<i64>(&mut conn)
                    .await
                    .unwrap()
                    > 0
            }
        }
    }

    /// Whether the store removes what expires by itself (Redis), rather than by grantry's
    /// cleanup (SQL).
    pub fn expires_by_itself(&self) -> bool {
        matches!(self.cleanup, Cleanup::Prefix(_) | Cleanup::Topology { .. })
    }

    /// Closes the store, then removes what the test wrote (the guard does it on drop too,
    /// so a failing test cleans up as well).
    pub async fn finish(self) {
        drop(self.stores);
        drop(self.cleanup);
    }
}

/// Defines one `#[tokio::test]` per backend for a suite function taking `&Stores` (or, as
/// `for_each_backend!(fresh: name)`, taking the whole [`Fresh`] to look into the store).
macro_rules! for_each_backend {
    (fresh: $suite:ident) => {
        for_each_backend!(@tests $suite, |fresh| super::$suite(&fresh).await);
    };
    ($suite:ident) => {
        for_each_backend!(@tests $suite, |fresh| super::$suite(&fresh.stores).await);
    };
    (@tests $suite:ident, |$fresh:ident| $call:expr) => {
        mod $suite {
            use $crate::tests::store_suite::backends::Backend;

            async fn run(backend: Backend) {
                let Some($fresh) = backend.open().await else {
                    return;
                };
                $call;
                $fresh.finish().await;
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

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis_sentinel() {
                run(Backend::RedisSentinel).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis_cluster() {
                run(Backend::RedisCluster).await;
            }
        }
    };
}
