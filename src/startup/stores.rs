//! The backends of one `--store` URL: each concern's (flows, grants, rate-limit counters,
//! leases, legacy sessions, the outbox, the blocklist, tasks, the replicas' records, the
//! grant-event bus) on one pool or connection.

use std::sync::Arc;

use crate::blocklist::{
    BlocklistBackend,
    redis::RedisBlocklist,
    sql::{PostgresBlocklist, SqliteBlocklist},
};
use crate::flows::{
    FlowBackend,
    redis::RedisFlows,
    sql::{PostgresFlows, SqliteFlows},
};
use crate::grants::bus_postgres::PostgresBus;
use crate::grants::bus_redis::RedisBus;
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
use crate::outbox::{
    OutboxBackend,
    redis::RedisOutbox,
    sql::{PostgresOutbox, SqliteOutbox},
};
use crate::replicas::{
    ReplicaBackend,
    redis::RedisReplicas,
    sql::{PostgresReplicas, SqliteReplicas},
};
use crate::sessions::{
    SessionBackend,
    redis::RedisSessions,
    sql::{PostgresSessions, SqliteSessions},
};
use crate::store::{self, Replication, StoreError, StoreUrl};
use crate::tasks::{
    TaskBackend,
    redis::RedisTasks,
    sql::{PostgresTasks, SqliteTasks},
};

/// The backends behind one `--store` URL.
#[derive(Clone)]
pub struct Stores {
    pub(crate) flows: Arc<dyn FlowBackend>,
    pub grants: Arc<dyn GrantBackend>,
    /// How grant events reach other replicas (`None`: one process, SQLite).
    pub(crate) bus: Option<Arc<dyn EventBus>>,
    /// Rate-limit counters shared by the replicas.
    pub(crate) counters: Arc<dyn CounterBackend>,
    /// Exclusive leases shared by the replicas.
    pub leases: Arc<dyn LeaseBackend>,
    /// Legacy-era MCP sessions shared by the replicas.
    pub(crate) sessions: Arc<dyn SessionBackend>,
    /// Lifecycle events on their way to the webhook endpoints.
    pub(crate) outbox: Arc<dyn OutboxBackend>,
    /// The MCP clients refused the use of connections.
    pub(crate) blocklist: Arc<dyn BlocklistBackend>,
    /// MCP tasks, readable by every replica.
    pub(crate) tasks: Arc<dyn TaskBackend>,
    /// The replicas serving the store, each as it records itself.
    pub(crate) replicas: Arc<dyn ReplicaBackend>,
}

/// Opens the store, brings its schema up to date, and builds every backend on it. Redis keys
/// start with `redis_prefix`.
pub async fn open_stores(store: &StoreUrl, redis_prefix: &str) -> Result<Stores, StoreError> {
    open_stores_with(store, redis_prefix, Replication::default()).await
}

/// As [`open_stores`], a Redis store's writes acknowledged by `replication`'s replicas.
pub(crate) async fn open_stores_with(
    store: &StoreUrl,
    redis_prefix: &str,
    replication: Replication,
) -> Result<Stores, StoreError> {
    match store {
        StoreUrl::Sqlite(url) => sqlite(url).await,
        StoreUrl::Postgres(url) => postgres(url).await,
        StoreUrl::Redis(url) => redis(url, redis_prefix, replication).await,
    }
}

async fn sqlite(url: &str) -> Result<Stores, StoreError> {
    let pool = store::sqlite_pool(url).await?;
    Ok(Stores {
        flows: Arc::new(SqliteFlows::new(pool.clone())),
        grants: Arc::new(SqliteGrants::new(pool.clone())),
        counters: Arc::new(SqliteCounters::new(pool.clone())),
        leases: Arc::new(SqliteLeases::new(pool.clone())),
        sessions: Arc::new(SqliteSessions::new(pool.clone())),
        blocklist: Arc::new(SqliteBlocklist::new(pool.clone())),
        tasks: Arc::new(SqliteTasks::new(pool.clone())),
        replicas: Arc::new(SqliteReplicas::new(pool.clone())),
        outbox: Arc::new(SqliteOutbox::new(pool.clone(), pool)),
        bus: None,
    })
}

async fn postgres(url: &str) -> Result<Stores, StoreError> {
    let pool = store::postgres_pool(url).await?;
    Ok(Stores {
        flows: Arc::new(PostgresFlows::new(pool.clone())),
        grants: Arc::new(PostgresGrants::new(pool.clone())),
        counters: Arc::new(PostgresCounters::new(pool.clone())),
        leases: Arc::new(PostgresLeases::new(pool.clone())),
        sessions: Arc::new(PostgresSessions::new(pool.clone())),
        blocklist: Arc::new(PostgresBlocklist::new(pool.clone())),
        tasks: Arc::new(PostgresTasks::new(pool.clone())),
        replicas: Arc::new(PostgresReplicas::new(pool.clone())),
        outbox: Arc::new(PostgresOutbox::new(
            pool.clone(),
            store::postgres_relaxed_pool(url)?,
        )),
        bus: Some(Arc::new(PostgresBus::new(pool))),
    })
}

async fn redis(url: &str, prefix: &str, replication: Replication) -> Result<Stores, StoreError> {
    let conn = store::RedisConn::connect(url).await?;
    store::redis::migrate::to_buckets(&conn, &store::redis::layout::Keys::new(prefix)).await?;
    let grants = RedisGrants::new(conn.clone(), prefix, replication);
    let outbox = RedisOutbox::new(conn.clone(), prefix);
    Ok(Stores {
        flows: Arc::new(RedisFlows::new(conn.clone(), prefix)),
        grants: Arc::new(grants),
        outbox: Arc::new(outbox),
        counters: Arc::new(RedisCounters::new(conn.clone(), prefix)),
        leases: Arc::new(RedisLeases::new(conn.clone(), prefix, replication)),
        sessions: Arc::new(RedisSessions::new(conn.clone(), prefix)),
        blocklist: Arc::new(RedisBlocklist::new(conn.clone(), prefix)),
        tasks: Arc::new(RedisTasks::new(conn.clone(), prefix, replication)),
        replicas: Arc::new(RedisReplicas::new(conn.clone(), prefix)),
        bus: Some(Arc::new(RedisBus::new(conn, prefix))),
    })
}
