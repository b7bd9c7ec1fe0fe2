//! What grantry checks of a Redis before it writes anything there: that it is the kind the
//! URL says (a URL for one server must not reach a cluster node or a sentinel, a cluster URL
//! must reach cluster nodes, a Sentinel URL sentinels that know the master named), and which
//! of its nodes would lose an acknowledged write in a crash. Every refusal names the node.

use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo};
use redis::{IntoConnectionInfo, RedisError, Value};

use super::RedisConn;
use super::sentinel::{address, sentinel_addrs};
use super::topology::{SentinelSetup, Topology};
use crate::store::StoreError;

/// Refuses a Redis that is not what its URL says it is.
pub(crate) async fn is_as_named(topology: &Topology) -> Result<(), StoreError> {
    match topology {
        Topology::Single(url) => lone_server(url).await,
        Topology::Cluster { nodes } => cluster_nodes(nodes).await,
        Topology::Sentinel(setup) => sentinels(setup).await,
    }
}

async fn lone_server(url: &str) -> Result<(), StoreError> {
    let client = redis::Client::open(url)?;
    let node = address(client.get_connection_info().addr());
    let info = info(&client).await?;
    if field(&info, "redis_mode") == Some("sentinel") {
        return Err(refused(format!(
            "{node} is a Redis Sentinel, not a server: name the primary through it with \
             redis+sentinel://{node}/MASTER"
        )));
    }
    if field(&info, "cluster_enabled") == Some("1") {
        return Err(refused(format!(
            "{node} is a Redis Cluster node: name the cluster with redis+cluster://{node}[,…]"
        )));
    }
    Ok(())
}

async fn cluster_nodes(nodes: &[String]) -> Result<(), StoreError> {
    let mut answered = false;
    for url in nodes {
        let client = redis::Client::open(url.as_str())?;
        let node = address(client.get_connection_info().addr());
        let Ok(info) = info(&client).await else {
            continue; // another seed may answer; the cluster client needs only one
        };
        answered = true;
        if field(&info, "cluster_enabled") != Some("1") {
            return Err(refused(format!(
                "{node} is not a Redis Cluster node (cluster_enabled is not 1): for one server, \
                 use redis://{node}"
            )));
        }
    }
    if !answered {
        return Err(refused("no seed node of the Redis Cluster answers".into()));
    }
    Ok(())
}

async fn sentinels(setup: &SentinelSetup) -> Result<(), StoreError> {
    let mut known = None;
    let nodes = setup
        .sentinels
        .iter()
        .map(|(host, port)| format!("{host}:{port}"));
    for (node, addr) in nodes.zip(sentinel_addrs(setup)) {
        // With the sentinels' own password, as the client that follows the primary asks them.
        let mut settings = redis::RedisConnectionInfo::default();
        if let Some(password) = &setup.sentinel_password {
            settings = settings.set_password(password);
        }
        let info = addr.into_connection_info()?.set_redis_settings(settings);
        let client = redis::Client::open(info)?;
        let Ok(mut conn) = client.get_multiplexed_async_connection().await else {
            continue;
        };
        let role: Vec<Value> = match redis::cmd("ROLE").query_async(&mut conn).await {
            Ok(role) => role,
            Err(e) if e.kind() == redis::ErrorKind::AuthenticationFailed => continue,
            Err(e) => return Err(e.into()),
        };
        if !matches!(role.first(), Some(Value::BulkString(r)) if r == b"sentinel") {
            return Err(refused(format!(
                "{node} is not a Redis Sentinel: for one server, use redis://{node}"
            )));
        }
        let masters: Vec<std::collections::HashMap<String, String>> = redis::cmd("SENTINEL")
            .arg("MASTERS")
            .query_async(&mut conn)
            .await?;
        known = Some(
            masters
                .into_iter()
                .filter_map(|m| m.get("name").cloned())
                .collect::<Vec<_>>(),
        );
        break;
    }
    let Some(known) = known else {
        return Err(refused("no sentinel of the URL answers".into()));
    };
    if !known.contains(&setup.master) {
        return Err(refused(format!(
            "the sentinels know no master named `{}`; they monitor: {}",
            setup.master,
            if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            }
        )));
    }
    Ok(())
}

/// What each node says of the settings a crash-proof write needs (appendonly, appendfsync,
/// maxmemory-policy): every data node of a cluster, the primary and its replicas behind
/// Sentinel, the one server otherwise. Each problem names its node.
pub(crate) async fn durability_problems(conn: &RedisConn) -> Result<Vec<String>, RedisError> {
    let mut problems = Vec::new();
    for (node, settings) in settings_by_node(conn).await? {
        for problem in settings_problems(&settings) {
            problems.push(format!("{node}: {problem}"));
        }
    }
    Ok(problems)
}

/// The settings grantry needs, as each node reports them.
type Settings = std::collections::HashMap<String, String>;

const SETTINGS: [&str; 3] = ["appendonly", "appendfsync", "maxmemory-policy"];

async fn settings_by_node(conn: &RedisConn) -> Result<Vec<(String, Settings)>, RedisError> {
    match conn {
        RedisConn::Single { client, .. } => {
            let node = address(client.get_connection_info().addr());
            Ok(vec![(node, settings_of(client).await?)])
        }
        RedisConn::Sentinel(sentinel) => {
            let mut nodes = vec![sentinel.primary_client()];
            nodes.extend(sentinel.replica_clients().await?);
            let mut found = Vec::new();
            for client in nodes {
                let node = address(client.get_connection_info().addr());
                found.push((node, settings_of(&client).await?));
            }
            Ok(found)
        }
        RedisConn::Cluster { conn, .. } => {
            let mut by_node: std::collections::BTreeMap<String, Settings> = Default::default();
            for name in SETTINGS {
                let every = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllNodes, None));
                let mut cmd = redis::cmd("CONFIG");
                cmd.arg("GET").arg(name);
                let answers = conn.clone().route_command(cmd, every).await?;
                for (node, value) in node_answers(answers)? {
                    by_node.entry(node).or_default().insert(name.into(), value);
                }
            }
            Ok(by_node.into_iter().collect())
        }
    }
}

/// A cluster's answers from every node: (`host:port`, the setting's value).
fn node_answers(answers: Value) -> Result<Vec<(String, String)>, RedisError> {
    let Value::Map(pairs) = answers else {
        return Err(RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "a cluster's CONFIG GET answers no map of nodes",
        )));
    };
    pairs
        .into_iter()
        .map(|(node, reply)| {
            let node: String = redis::from_redis_value(node)?;
            let pair: Vec<String> = redis::from_redis_value(reply)?;
            Ok((node, pair.get(1).cloned().unwrap_or_default()))
        })
        .collect()
}

async fn settings_of(client: &redis::Client) -> Result<Settings, RedisError> {
    let mut conn = client.get_multiplexed_async_connection().await?;
    let mut found = Settings::new();
    for name in SETTINGS {
        let pair: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(name)
            .query_async(&mut conn)
            .await?;
        found.insert(name.into(), pair.get(1).cloned().unwrap_or_default());
    }
    Ok(found)
}

fn settings_problems(settings: &Settings) -> Vec<String> {
    let get = |name: &str| settings.get(name).map_or("", String::as_str);
    let mut problems = Vec::new();
    if get("appendonly") != "yes" {
        problems.push(format!("appendonly is `{}`, not `yes`", get("appendonly")));
    }
    if get("appendfsync") != "always" {
        problems.push(format!(
            "appendfsync is `{}`, not `always` (a crash loses up to a second of writes)",
            get("appendfsync")
        ));
    }
    if get("maxmemory-policy") != "noeviction" {
        problems.push(format!(
            "maxmemory-policy is `{}`, not `noeviction`",
            get("maxmemory-policy")
        ));
    }
    problems
}

async fn info(client: &redis::Client) -> Result<String, RedisError> {
    let mut conn = client.get_multiplexed_async_connection().await?;
    let server: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut conn)
        .await?;
    // A sentinel has no `cluster` section; a server's names `cluster_enabled`.
    let cluster: String = redis::cmd("INFO")
        .arg("cluster")
        .query_async(&mut conn)
        .await?;
    Ok(format!("{server}\n{cluster}"))
}

/// A `name:value` line of an `INFO` answer.
fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|line| line.trim().strip_prefix(name)?.strip_prefix(':'))
}

fn refused(why: String) -> StoreError {
    StoreError::Unavailable(format!(
        "the Redis of --store is not what its URL says: {why}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_fields_are_read_by_name() {
        let info = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n\n# Cluster\r\ncluster_enabled:0\r\n";
        assert_eq!(field(info, "redis_mode"), Some("standalone"));
        assert_eq!(field(info, "cluster_enabled"), Some("0"));
        assert_eq!(field(info, "redis"), None);
    }

    #[test]
    fn every_missing_setting_is_named() {
        let settings: Settings = [
            ("appendonly", "no"),
            ("appendfsync", "everysec"),
            ("maxmemory-policy", "allkeys-lru"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(settings_problems(&settings).len(), 3);
        let good: Settings = [
            ("appendonly", "yes"),
            ("appendfsync", "always"),
            ("maxmemory-policy", "noeviction"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert!(settings_problems(&good).is_empty());
    }
}
