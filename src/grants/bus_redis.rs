//! Grant events between replicas over Redis pub/sub (on a connection of its own, as a
//! subscribed connection can do nothing else).

use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use redis::aio::ConnectionManager;

use super::{EventBus, GrantEvents};
use crate::store::StoreError;

pub(crate) struct RedisBus {
    client: redis::Client,
    conn: ConnectionManager,
    channel: String,
}

impl RedisBus {
    pub(crate) fn new(client: redis::Client, conn: ConnectionManager, prefix: &str) -> Self {
        Self {
            client,
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
        let client = self.client.clone();
        let channel = self.channel.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = listen(&client, &channel, &events).await {
                    tracing::warn!(error = %e, "grant event listener lost Redis; reconnecting");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
}

async fn listen(
    client: &redis::Client,
    channel: &str,
    events: &GrantEvents,
) -> Result<(), redis::RedisError> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    let mut messages = pubsub.on_message();
    while let Some(message) = messages.next().await {
        if let Ok(tag) = message.get_payload::<String>() {
            events.deliver(tag);
        }
    }
    Ok(())
}
