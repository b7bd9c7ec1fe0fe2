//! Whether a Redis Cluster serves every slot now (`/readyz`): each primary the cluster names
//! for a slot range answers. The cluster client skips nodes it has no connection to when it
//! sends to "all primaries", so each is asked by address: a primary that died and is not yet
//! replaced fails the check, and its replacement passes it once promoted.

use redis::Value;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};

use crate::store::StoreError;

pub(super) async fn every_slot_served(conn: &ClusterConnection) -> Result<(), StoreError> {
    let mut conn = conn.clone();
    let slots = conn
        .route_command(
            redis::cmd("CLUSTER").arg("SLOTS").clone(),
            RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random),
        )
        .await?;
    let primaries = primaries(&slots);
    if primaries.is_empty() {
        return Err(StoreError::Unavailable(
            "the Redis Cluster names no primary for its slots".into(),
        ));
    }
    for (host, port) in primaries {
        let at = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress { host, port });
        conn.route_command(redis::cmd("PING"), at).await?;
    }
    Ok(())
}

/// The primary of each slot range of a `CLUSTER SLOTS` answer (`[start, end, [host, port,
/// id, …], replicas…]`), each once.
fn primaries(slots: &Value) -> Vec<(String, u16)> {
    let Value::Array(ranges) = slots else {
        return Vec::new();
    };
    let mut found: Vec<(String, u16)> = ranges
        .iter()
        .filter_map(|range| match range {
            Value::Array(parts) => parts.get(2),
            _ => None,
        })
        .filter_map(|primary| match primary {
            Value::Array(node) => match (node.first(), node.get(1)) {
                (Some(host), Some(Value::Int(port))) => {
                    Some((text(host)?, u16::try_from(*port).ok()?))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(host: &str, port: i64) -> Value {
        Value::Array(vec![
            Value::BulkString(host.as_bytes().to_vec()),
            Value::Int(port),
            Value::BulkString(b"id".to_vec()),
        ])
    }

    #[test]
    fn each_ranges_primary_is_read_once() {
        let range = |start, end, primary: Value, replica: Value| {
            Value::Array(vec![Value::Int(start), Value::Int(end), primary, replica])
        };
        let slots = Value::Array(vec![
            range(0, 5460, node("10.0.0.1", 7000), node("10.0.0.4", 7003)),
            range(5461, 10922, node("10.0.0.2", 7001), node("10.0.0.5", 7004)),
            range(10923, 16000, node("10.0.0.3", 7002), node("10.0.0.6", 7005)),
            range(16001, 16383, node("10.0.0.3", 7002), node("10.0.0.6", 7005)),
        ]);
        assert_eq!(
            primaries(&slots),
            vec![
                ("10.0.0.1".to_owned(), 7000),
                ("10.0.0.2".to_owned(), 7001),
                ("10.0.0.3".to_owned(), 7002)
            ]
        );
        assert!(primaries(&Value::Nil).is_empty());
    }
}
