//! A connection to the primary that Redis Sentinel names, following it through a failover.
//! The redis crate finds the primary (`SentinelClient`: the sentinels' `SENTINEL MASTERS`,
//! then `ROLE` on the address they give) but a connection it hands out stays with that node.
//! Here the primary is asked of the sentinels every second, and at once when a command fails
//! as a demoted or lost primary fails (an I/O error, `READONLY`, `MASTERDOWN`); when the
//! sentinels name another node, new commands go to it. A command a replica refused
//! (`READONLY`: it did not run) is sent once more, to the new primary; any other failure is
//! the caller's to report (it may have run).

use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{
    Cmd, ConnectionAddr, ErrorKind, Pipeline, RedisError, RedisFuture, ServerErrorKind, Value,
};

use super::topology::SentinelSetup;

/// How often the sentinels are asked which node is the primary.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// The primary through Sentinel; cheap to clone.
#[derive(Clone)]
pub struct SentinelConn(Arc<Inner>);

struct Inner {
    sentinel: tokio::sync::Mutex<SentinelClient>,
    primary: RwLock<Primary>,
    config: ConnectionManagerConfig,
}

#[derive(Clone)]
struct Primary {
    address: String,
    client: redis::Client,
    conn: ConnectionManager,
}

impl SentinelConn {
    /// Asks the sentinels for `setup.master`'s primary and connects to it.
    pub(crate) async fn connect(
        setup: &SentinelSetup,
        config: ConnectionManagerConfig,
    ) -> Result<Self, RedisError> {
        let mut sentinel = client(setup)?;
        let found = sentinel.async_get_client().await?;
        let primary = Primary::open(found, config.clone()).await?;
        let inner = Arc::new(Inner {
            sentinel: tokio::sync::Mutex::new(sentinel),
            primary: RwLock::new(primary),
            config,
        });
        watch(Arc::downgrade(&inner));
        Ok(Self(inner))
    }

    /// A client of the primary now (for a connection of its own, such as a subscriber's).
    pub(crate) fn primary_client(&self) -> redis::Client {
        self.0.current().client
    }

    /// A client of each replica the primary has connected (`INFO replication`), with the
    /// primary's credentials.
    pub(crate) async fn replica_clients(&self) -> Result<Vec<redis::Client>, RedisError> {
        let primary = self.primary_client();
        let mut conn = primary.get_multiplexed_async_connection().await?;
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut conn)
            .await?;
        let secure = matches!(
            primary.get_connection_info().addr(),
            ConnectionAddr::TcpTls { .. }
        );
        replicas_in(&info)
            .into_iter()
            .map(|(host, port)| {
                let addr = if secure {
                    ConnectionAddr::TcpTls {
                        host,
                        port,
                        insecure: false,
                        tls_params: None,
                    }
                } else {
                    ConnectionAddr::Tcp(host, port)
                };
                redis::Client::open(primary.get_connection_info().clone().set_addr(addr))
            })
            .collect()
    }
}

impl Inner {
    fn current(&self) -> Primary {
        self.primary
            .read()
            .expect("the primary's lock is never poisoned")
            .clone()
    }

    /// Asks the sentinels which node is the primary, and moves to it if it is another one.
    async fn refresh(&self) -> Result<(), RedisError> {
        let found = self.sentinel.lock().await.async_get_client().await?;
        let found_address = address(found.get_connection_info().addr());
        let before = self.current().address;
        if found_address == before {
            return Ok(());
        }
        let primary = Primary::open(found, self.config.clone()).await?;
        tracing::warn!(from = %before, to = %primary.address, "Redis Sentinel names another primary; following it");
        *self
            .primary
            .write()
            .expect("the primary's lock is never poisoned") = primary;
        Ok(())
    }

    /// After `error`: whether the primary may have moved (then it is asked at once).
    async fn after(&self, error: &RedisError) {
        if may_have_moved(error)
            && let Err(e) = self.refresh().await
        {
            tracing::warn!(error = %e, "cannot ask the sentinels for the Redis primary");
        }
    }
}

impl Primary {
    async fn open(
        client: redis::Client,
        config: ConnectionManagerConfig,
    ) -> Result<Self, RedisError> {
        let conn = ConnectionManager::new_with_config(client.clone(), config).await?;
        Ok(Self {
            address: address(client.get_connection_info().addr()),
            client,
            conn,
        })
    }
}

/// Asks the sentinels every second while the connection lives.
fn watch(inner: Weak<Inner>) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(WATCH_EVERY).await;
            let Some(inner) = inner.upgrade() else {
                return;
            };
            if let Err(e) = inner.refresh().await {
                tracing::debug!(error = %e, "cannot ask the sentinels for the Redis primary");
            }
        }
    });
}

fn may_have_moved(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_refusal()
        || error.is_connection_dropped()
        || error.is_timeout()
        || refused_by_replica(error)
        || error.kind() == ErrorKind::Server(ServerErrorKind::MasterDown)
}

/// `READONLY`: a replica refused a write, which did not run.
fn refused_by_replica(error: &RedisError) -> bool {
    error.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly)
}

/// The address of each sentinel `setup` names (IPv6 without its brackets).
pub(super) fn sentinel_addrs(setup: &SentinelSetup) -> impl Iterator<Item = ConnectionAddr> + '_ {
    setup.sentinels.iter().map(|(host, port)| {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if setup.tls {
            ConnectionAddr::TcpTls {
                host,
                port: *port,
                insecure: false,
                tls_params: None,
            }
        } else {
            ConnectionAddr::Tcp(host, *port)
        }
    })
}

fn client(setup: &SentinelSetup) -> Result<SentinelClient, RedisError> {
    let sentinels = sentinel_addrs(setup);
    let mut builder =
        SentinelClientBuilder::new(sentinels, &setup.master, SentinelServerType::Master)?
            .set_client_to_redis_db(setup.db);
    if setup.tls {
        builder = builder
            .set_client_to_redis_tls_mode(redis::TlsMode::Secure)
            .set_client_to_sentinel_tls_mode(redis::TlsMode::Secure);
    }
    if let Some(username) = &setup.username {
        builder = builder.set_client_to_redis_username(username);
    }
    if let Some(password) = &setup.password {
        builder = builder.set_client_to_redis_password(password);
    }
    if let Some(password) = &setup.sentinel_password {
        builder = builder.set_client_to_sentinel_password(password);
    }
    builder.build()
}

/// The replicas an `INFO replication` answer lists (`slaveN:ip=…,port=…,…`).
fn replicas_in(info: &str) -> Vec<(String, u16)> {
    info.lines()
        .filter(|line| line.starts_with("slave") && line.contains("ip="))
        .filter_map(|line| {
            let field = |name: &str| {
                line.split([':', ','])
                    .find_map(|part| part.strip_prefix(name))
            };
            Some((field("ip=")?.to_owned(), field("port=")?.parse().ok()?))
        })
        .collect()
}

/// `host:port` of an address, as logs and refusals name nodes.
pub(crate) fn address(addr: &ConnectionAddr) -> String {
    match addr {
        ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
            format!("{host}:{port}")
        }
        other => other.to_string(),
    }
}

impl ConnectionLike for SentinelConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let mut conn = self.0.current().conn;
            match conn.req_packed_command(cmd).await {
                Err(e) if refused_by_replica(&e) => {
                    self.0.after(&e).await;
                    self.0.current().conn.req_packed_command(cmd).await
                }
                Err(e) => {
                    self.0.after(&e).await;
                    Err(e)
                }
                ok => ok,
            }
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let mut conn = self.0.current().conn;
            let answer = conn.req_packed_commands(pipeline, offset, count).await;
            if let Err(e) = &answer {
                self.0.after(e).await;
            }
            answer
        })
    }

    fn get_db(&self) -> i64 {
        self.0.current().conn.get_db()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_replicas_are_read_from_info_replication() {
        let info = "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n\
            slave0:ip=127.0.0.1,port=17051,state=online,offset=42,lag=0\r\n\
            slave1:ip=10.0.0.2,port=6380,state=online,offset=42,lag=1\r\nmaster_failover_state:no-failover\r\n";
        assert_eq!(
            super::replicas_in(info),
            [
                ("127.0.0.1".to_owned(), 17051),
                ("10.0.0.2".to_owned(), 6380)
            ]
        );
    }
}
