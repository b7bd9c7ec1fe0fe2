//! The writes that change a connection's life, each with its lifecycle event in the same
//! store write (the transactional outbox: no change without its event, no event without its
//! change). Events name the connection, the principal, the provider, the account, the state
//! and why: never a token.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Notify;

use super::event::{EventKind, event_data};
use super::schedule::next_look;
use crate::access::scope_list;
use crate::config::webhooks::EndpointName;
use crate::grants::{Grant, GrantKey, Grants, Health, ReauthReason, State, Stored};
use crate::identity::McpClient;
use crate::ids::ConnectionId;
use crate::outbox::{Delivery, Event};
use crate::providers::Provider;
use crate::providers::oauth::TokenSet;
use crate::store::StoreError;

/// What the lifecycle writes need besides the store: where events go, when to warn of a hard
/// expiry, and how to wake this replica's deliverer.
#[derive(Clone, Default)]
pub struct LifecycleSettings {
    /// Each event is queued once per endpoint; none configured: none queued.
    pub(crate) endpoints: Arc<[EndpointName]>,
    pub expiry_warning_secs: i64,
    pub wake: Arc<Notify>,
}

/// The lifecycle writes: the grants' store, and what their events need.
#[derive(Clone)]
pub struct Lifecycle {
    grants: Grants,
    settings: LifecycleSettings,
}

/// A use is recorded at most this often per grant: `list_connections` shows "last used", and
/// a write per call would cost more than the call.
const TOUCH_EVERY_SECS: i64 = 300;

/// The first retry of a failing refresh, doubled per failure up to [`RETRY_AT_MOST_SECS`].
const RETRY_FIRST_SECS: i64 = 60;
const RETRY_AT_MOST_SECS: i64 = 6 * 3600;

/// What a lifecycle write changes.
struct Change<'a> {
    kind: Option<EventKind>,
    state: State,
    health: Health,
    /// New tokens (a refresh), or `None` to keep the grant's.
    tokens: Option<&'a TokenSet>,
}

impl Lifecycle {
    pub fn new(grants: Grants, settings: LifecycleSettings) -> Self {
        Self { grants, settings }
    }

    /// The store the writes go to.
    pub(crate) fn grants(&self) -> &Grants {
        &self.grants
    }

    /// Stores the grant of a completed sign-in, a new connection or a reconnection of an
    /// existing one (same id, `connection.reconnected`), then wakes the retries waiting for
    /// it. Returns only after the store acknowledged the write.
    pub async fn store_signed_in(
        &self,
        key: &GrantKey,
        provider: &Provider,
        tokens: &TokenSet,
        now: i64,
    ) -> Result<(), StoreError> {
        let old = self.grants.row(key).await?;
        let (version, created_at, connection_id, kind) = match &old {
            Some(old) => (
                old.version + 1,
                old.created_at,
                crate::grants::connection_id(key, &old.connection_id),
                EventKind::Reconnected,
            ),
            None => (1, now, ConnectionId::fresh(), EventKind::Created),
        };
        let health = signed_in(provider, now);
        let stored = Stored {
            tokens,
            version,
            created_at,
            updated_at: now,
            connection_id: &connection_id,
            state: State::Active,
            health: &health,
            keepalive_at: next_look(
                provider,
                State::Active,
                &health,
                now,
                self.settings.expiry_warning_secs,
            ),
            used_at: old.as_ref().map_or(0, |o| o.used_at),
        };
        let used_by = old
            .as_ref()
            .and_then(|o| McpClient::from_stored(&o.used_by));
        let data = event_data(
            key,
            &connection_id,
            tokens,
            (State::Active, &health),
            used_by.as_ref(),
        );
        let mut events = self.deliveries(kind, key, data.clone(), now);
        let previous = old.as_ref().map(|o| scope_list(&o.scopes));
        let changed = previous.filter(|before| !same_scopes(before, &tokens.scopes));
        if let Some(before) = &changed {
            let mut data = data;
            data["previous_scopes"] = json!(before);
            events.extend(self.deliveries(EventKind::ScopesChanged, key, data, now));
        }
        self.grants.put(key, &stored, &events).await?;
        self.written(kind, key, used_by.as_ref());
        if changed.is_some() {
            self.written(EventKind::ScopesChanged, key, used_by.as_ref());
        }
        self.grants.events().notify(key).await;
        Ok(())
    }

    /// Keeps refreshed tokens if nobody changed the grant since `previous` was read: the
    /// connection is active again (`connection.recovered` if its refreshes were failing).
    pub(crate) async fn store_refreshed(
        &self,
        key: &GrantKey,
        provider: &Provider,
        previous: &Grant,
        tokens: &TokenSet,
        now: i64,
    ) -> Result<bool, StoreError> {
        let health = Health {
            refreshed_at: now,
            hard_expires_at: previous.health.hard_expires_at,
            expiry_warned: previous.health.expiry_warned,
            signed_in_at: previous.health.signed_in_at,
            ..Health::default()
        };
        let recovered = previous.state == State::RefreshFailing;
        let change = Change {
            kind: recovered.then_some(EventKind::Recovered),
            state: State::Active,
            health,
            tokens: Some(tokens),
        };
        self.change(key, provider, previous, change, now).await
    }

    /// A refresh failed for a reason that may pass: the connection is `refresh_failing`,
    /// tried again after a backoff; `connection.refresh_failed` is sent when it starts failing.
    pub(crate) async fn note_refresh_failed(
        &self,
        key: &GrantKey,
        provider: &Provider,
        previous: &Grant,
        reason: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let failures = previous.health.failures.saturating_add(1);
        let backoff = RETRY_FIRST_SECS
            .saturating_mul(1 << (failures - 1).min(16))
            .min(RETRY_AT_MOST_SECS);
        let health = Health {
            reason: Some(reason.to_owned()),
            failures,
            retry_at: now + backoff + rand::random_range(0..=backoff / 10),
            ..previous.health.clone()
        };
        let change = Change {
            kind: (previous.state != State::RefreshFailing).then_some(EventKind::RefreshFailed),
            state: State::RefreshFailing,
            health,
            tokens: None,
        };
        self.change(key, provider, previous, change, now).await
    }

    /// The provider no longer honours the grant: it is kept, `needs_reauth` with `reason`,
    /// until the user reconnects or disconnects; `connection.needs_reauth` is sent once.
    pub(crate) async fn mark_needs_reauth(
        &self,
        key: &GrantKey,
        provider: &Provider,
        previous: &Grant,
        reason: ReauthReason,
        now: i64,
    ) -> Result<bool, StoreError> {
        if previous.state == State::NeedsReauth {
            return Ok(true);
        }
        let change = Change {
            kind: Some(EventKind::NeedsReauth),
            state: State::NeedsReauth,
            health: Health {
                reason: Some(reason.as_str().to_owned()),
                retry_at: 0,
                ..previous.health.clone()
            },
            tokens: None,
        };
        self.change(key, provider, previous, change, now).await
    }

    /// The hard expiry is within the warning: `connection.expiring`, once.
    pub(crate) async fn note_expiring(
        &self,
        key: &GrantKey,
        provider: &Provider,
        previous: &Grant,
        now: i64,
    ) -> Result<bool, StoreError> {
        let change = Change {
            kind: Some(EventKind::Expiring),
            state: previous.state,
            health: Health {
                expiry_warned: true,
                ..previous.health.clone()
            },
            tokens: None,
        };
        self.change(key, provider, previous, change, now).await
    }

    /// Removes the connection if it is still as `previous` was read, with
    /// `connection.disconnected` (`reason`: who or what ended it).
    pub async fn disconnect(
        &self,
        key: &GrantKey,
        previous: &Grant,
        reason: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut data = event_data(
            key,
            &previous.connection_id,
            &previous.tokens,
            (previous.state, &previous.health),
            previous.used_by.as_ref(),
        );
        data["state"] = json!("disconnected");
        data["reason"] = json!(reason);
        let events = self.deliveries(EventKind::Disconnected, key, data, now);
        let done = self.grants.remove(key, previous.version, &events).await?;
        if done {
            self.written(EventKind::Disconnected, key, previous.used_by.as_ref());
        }
        Ok(done)
    }

    /// Records, in the background, that a tool used `grant` through `client`: at once when
    /// the client is another than last time, else at most every few minutes (most calls
    /// write nothing).
    pub(crate) fn record_use(
        &self,
        key: &GrantKey,
        grant: &Grant,
        client: Option<&McpClient>,
        now: i64,
    ) {
        let another_client = grant.used_by.as_ref() != client;
        if another_client {
            crate::audit::Audit {
                principal: Some(&key.principal),
                provider: Some(&key.provider),
                flow_id: None,
                client,
            }
            .notice(
                "connection.used_by",
                "connection used through another MCP client",
            );
        }
        if another_client || now - grant.used_at >= TOUCH_EVERY_SECS {
            self.grants.touch_in_background(key, now, client);
        }
    }

    /// Writes `change` over `previous` with compare-and-set, and its event with it.
    async fn change(
        &self,
        key: &GrantKey,
        provider: &Provider,
        previous: &Grant,
        change: Change<'_>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let tokens = change.tokens.unwrap_or(&previous.tokens);
        let last_write = if change.tokens.is_some() {
            now
        } else {
            previous.updated_at
        };
        let stored = Stored {
            tokens,
            version: previous.version + 1,
            created_at: previous.created_at,
            updated_at: last_write,
            connection_id: &previous.connection_id,
            state: change.state,
            health: &change.health,
            keepalive_at: next_look(
                provider,
                change.state,
                &change.health,
                last_write,
                self.settings.expiry_warning_secs,
            ),
            used_at: previous.used_at,
        };
        let events = match change.kind {
            Some(kind) => {
                let data = event_data(
                    key,
                    &previous.connection_id,
                    tokens,
                    (change.state, &change.health),
                    previous.used_by.as_ref(),
                );
                self.deliveries(kind, key, data, now)
            }
            None => Vec::new(),
        };
        let done = self
            .grants
            .replace(key, previous.version, &stored, &events)
            .await?;
        if let (true, Some(kind)) = (done, change.kind) {
            self.written(kind, key, previous.used_by.as_ref());
        }
        Ok(done)
    }

    fn deliveries(&self, kind: EventKind, key: &GrantKey, data: Value, now: i64) -> Vec<Delivery> {
        Event {
            event_type: kind.as_str(),
            connection: key.tag(),
            data,
            at: now,
        }
        .deliveries(&self.settings.endpoints)
    }

    /// After an event's write: counted, audited (with the client the connection was last
    /// used through), and this replica's deliverer woken.
    fn written(&self, kind: EventKind, key: &GrantKey, used_by: Option<&McpClient>) {
        crate::metrics::lifecycle_event(kind.as_str());
        crate::audit::Audit {
            principal: Some(&key.principal),
            provider: Some(&key.provider),
            flow_id: None,
            client: used_by,
        }
        .notice(kind.as_str(), "connection lifecycle event");
        self.settings.wake.notify_one();
    }
}

/// The health of a connection just signed in: refreshed now, and the hard expiry the provider
/// gives its refresh tokens.
fn signed_in(provider: &Provider, now: i64) -> Health {
    Health {
        refreshed_at: now,
        signed_in_at: now,
        hard_expires_at: provider.refresh_max_secs().map(|max| now + max),
        ..Health::default()
    }
}

/// Whether two scope lists grant the same, whatever their order.
fn same_scopes(a: &[String], b: &[String]) -> bool {
    a.iter().all(|s| b.contains(s)) && b.iter().all(|s| a.contains(s))
}
