//! Grant events between replicas over Redis pub/sub (on a connection of its own, as a
//! subscribed connection can do nothing else; on a cluster, to any node: a message published
//! on one reaches subscribers on all).

use std::time::Duration;

use super::{EventBus, GrantEvents};
use crate::store::{RedisConn, StoreError};
use async_trait::async_trait;
use futures::StreamExt;

pub(crate) struct RedisBus {
    conn: RedisConn,
    channel: String,
}

impl RedisBus {
    pub(crate) fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            channel: format!("{prefix}grant-events"),
        }
    }
}

#[async_trait]
impl EventBus for RedisBus {
    async fn publish(&self, tag: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::cmd("PUBLISH")
            .arg(&self.channel)
            .arg(tag)
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    fn spawn_listener(&self, events: GrantEvents) {
        let conn = self.conn.clone();
        let channel = self.channel.clone();
        tokio::spawn(async move {
            loop {
                // Reconnects where the Redis is now (a new primary behind Sentinel, another
                // node of a cluster).
                if let Err(e) = listen(&conn, &channel, &events).await {
                    tracing::warn!(error = %e, "grant event listener lost Redis; reconnecting");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
}

async fn listen(
    conn: &RedisConn,
    channel: &str,
    events: &GrantEvents,
) -> Result<(), redis::RedisError> {
    let mut pubsub = conn.subscriber().await?;
    pubsub.subscribe(channel).await?;
    let mut messages = pubsub.on_message();
    while let Some(message) = messages.next().await {
        if let Ok(tag) = message.get_payload::<String>() {
            events.deliver(tag);
        }
    }
    Ok(())
}
