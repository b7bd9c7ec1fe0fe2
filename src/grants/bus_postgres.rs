//! Grant events between replicas over PostgreSQL `LISTEN/NOTIFY`.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::PgPool;
use sqlx::postgres::PgListener;

use super::{EventBus, GrantEvents};
use crate::store::StoreError;

const CHANNEL: &str = "grantry_grants";

pub(crate) struct PostgresBus {
    pool: PgPool,
}

impl PostgresBus {
    pub(crate) fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl EventBus for PostgresBus {
    async fn publish(&self, tag: &str) -> Result<(), StoreError> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(tag)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    fn spawn_listener(&self, events: GrantEvents) {
        let pool = self.pool.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = listen(&pool, &events).await {
                    tracing::warn!(error = %e, "grant event listener lost PostgreSQL; reconnecting");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
}

async fn listen(pool: &PgPool, events: &GrantEvents) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    loop {
        let notice = listener.recv().await?;
        events.deliver(notice.payload().to_owned());
    }
}
