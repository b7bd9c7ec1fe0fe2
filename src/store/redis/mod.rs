//! Redis, in whichever shape the `--store` URL names ([`topology`]): one server, a Redis
//! Cluster, or a primary found through Sentinel ([`sentinel`]). Every backend talks to it
//! through one [`RedisConn`], the same commands and scripts whatever the shape; what differs
//! (where a subscriber connects, which nodes the start-up checks read: [`checks`]) is here.
//! Where the keys of a connection's life live, so that a cluster runs their scripts too:
//! [`layout`] (and [`migrate`], for a store written before it).

pub(crate) mod checks;
pub mod layout;
pub(crate) mod migrate;
mod ready;
pub(crate) mod sentinel;
pub(crate) mod topology;

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig, PubSub};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisError, RedisFuture, Value};

use super::StoreError;
use sentinel::SentinelConn;
use topology::Topology;

/// How long a request waits for Redis before failing (then a 503, not a hang).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);

/// `--redis-min-replicas`: how many replicas must hold a write a person is told about (a
/// grant stored at sign-in, a refresh's compare-and-set, a disconnect) before it counts as
/// made, and how long to wait for them (`WAIT`). None by default: Redis's replication is
/// asynchronous, and a primary lost before it copied a write loses the write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Replication {
    pub min_replicas: u32,
    pub timeout: Duration,
}

impl Replication {
    /// Runs the script `invocation` and, when replicas are asked for, `WAIT`s for them on the
    /// same connection (one pipeline: a reconnect in between would make `WAIT` count nothing).
    /// A write the script made (`1`) that too few replicas acknowledged is an error: it stays
    /// on the primary, and nobody is told it was made.
    pub(crate) async fn write(
        &self,
        conn: &mut RedisConn,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<i64, StoreError> {
        if self.min_replicas == 0 {
            return Ok(invocation.invoke_async(conn).await?);
        }
        let timeout_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
        let mut pipe = redis::pipe();
        pipe.invoke_script(invocation)
            .cmd("WAIT")
            .arg(self.min_replicas)
            .arg(timeout_ms);
        let (written, acknowledged): (i64, u32) = match pipe.query_async(conn).await {
            // A pipeline does not load its scripts; the script did not run.
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                invocation.load_async(conn).await?;
                pipe.query_async(conn).await?
            }
            answer => answer?,
        };
        if written == 1 && acknowledged < self.min_replicas {
            return Err(StoreError::NotReplicated(format!(
                "{acknowledged} of the {} replicas asked for (--redis-min-replicas) acknowledged \
                 the write within {timeout_ms} ms",
                self.min_replicas
            )));
        }
        Ok(written)
    }
}

/// A shared, self-reconnecting connection to the Redis the URL names; cheap to clone.
#[derive(Clone)]
pub enum RedisConn {
    Single {
        conn: ConnectionManager,
        client: Arc<redis::Client>,
    },
    /// A cluster connection follows `MOVED`, `ASK` and failovers by itself.
    Cluster {
        conn: ClusterConnection,
        /// The seed nodes, for a subscriber's connection of its own.
        seeds: Vec<redis::Client>,
    },
    Sentinel(SentinelConn),
}

impl RedisConn {
    /// Connects to the Redis `url` names, after checking that it is the kind of Redis the URL
    /// says (a cluster node, a sentinel, a lone server).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let topology = Topology::parse(url).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        checks::is_as_named(&topology).await?;
        Ok(match topology {
            Topology::Single(url) => {
                let client = redis::Client::open(url)?;
                let conn =
                    ConnectionManager::new_with_config(client.clone(), manager_config()).await?;
                Self::Single {
                    conn,
                    client: Arc::new(client),
                }
            }
            Topology::Cluster { nodes } => Self::Cluster {
                conn: cluster_client(&nodes)?.get_async_connection().await?,
                seeds: nodes
                    .iter()
                    .map(|node| redis::Client::open(node.as_str()))
                    .collect::<Result<_, _>>()?,
            },
            Topology::Sentinel(setup) => {
                Self::Sentinel(SentinelConn::connect(&setup, manager_config()).await?)
            }
        })
    }

    /// Whether writes can be served now (`/readyz`): the server, or the primary now, answers;
    /// on a cluster, every slot's primary answers ([`ready`]).
    pub(crate) async fn ready(&self) -> Result<(), StoreError> {
        match self {
            Self::Cluster { conn, .. } => ready::every_slot_served(conn).await,
            _ => Ok(redis::cmd("PING")
                .query_async::<()>(&mut self.clone())
                .await?),
        }
    }

    /// A pub/sub connection of its own: to the server, to the primary now, or to the first
    /// seed of a cluster that answers (a message published on any node of a cluster reaches
    /// subscribers on every node).
    pub(crate) async fn subscriber(&self) -> Result<PubSub, RedisError> {
        match self {
            Self::Single { client, .. } => client.get_async_pubsub().await,
            Self::Sentinel(sentinel) => sentinel.primary_client().get_async_pubsub().await,
            Self::Cluster { seeds, .. } => {
                let mut last = None;
                for seed in seeds {
                    match seed.get_async_pubsub().await {
                        Ok(pubsub) => return Ok(pubsub),
                        Err(e) => last = Some(e),
                    }
                }
                Err(last.expect("a cluster URL names a node at least"))
            }
        }
    }
}

/// Fail fast while Redis is away (a 503 now beats a hung request) and reconnect in the
/// background: one retry, a short backoff, bounded timeouts.
fn manager_config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(1)))
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(500))
}

/// The cluster's client, failing as fast as the one-server connection: a few retries through
/// a redirection or a failover, never the crate's default of minutes.
fn cluster_client(nodes: &[String]) -> Result<redis::cluster::ClusterClient, RedisError> {
    ClusterClientBuilder::new(nodes.iter().map(String::as_str))
        .connection_timeout(Duration::from_secs(1))
        .response_timeout(RESPONSE_TIMEOUT)
        .overall_response_timeout(Some(RESPONSE_TIMEOUT * 2))
        .retries(4)
        .min_retry_wait(50)
        .max_retry_wait(1000)
        .build()
}

impl ConnectionLike for RedisConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single { conn, .. } => conn.req_packed_command(cmd),
            Self::Cluster { conn, .. } => conn.req_packed_command(cmd),
            Self::Sentinel(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single { conn, .. } => conn.req_packed_commands(pipeline, offset, count),
            Self::Cluster { conn, .. } => conn.req_packed_commands(pipeline, offset, count),
            Self::Sentinel(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single { conn, .. } => conn.get_db(),
            Self::Cluster { .. } => 0,
            Self::Sentinel(conn) => conn.get_db(),
        }
    }
}
