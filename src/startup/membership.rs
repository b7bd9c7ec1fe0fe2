//! This replica among the others on its store: its record made from its settings, checked
//! against the live replicas' before it serves ([`crate::replicas`]).

use std::net::SocketAddr;
use std::sync::Arc;

use super::StartError;
use crate::replicas::Replica;
use crate::replicas::membership::{JoinError, Membership};
use crate::state::AppState;

/// Records this replica, listening on `listen`, and refuses it where it disagrees with a
/// live one (another public URL, keys that cannot open each other's values); then keeps the
/// record fresh while it runs.
pub(crate) async fn join_replicas(
    state: &AppState,
    listen: SocketAddr,
) -> Result<Arc<Membership>, StartError> {
    let ring = state.sealer.key_ring();
    let now = grantry_base::clock::unix_now_millis();
    let me = Replica {
        id: grantry_base::random_id(),
        host: grantry_base::net::host_name(),
        listen: listen.to_string(),
        public_url: state.config.public_url.to_string(),
        sealing_key: ring.current_key_id(),
        key_ids: ring.key_ids(),
        started_at_ms: now,
        seen_at_ms: now,
    };
    let membership = Membership::join(state.replicas.clone(), me)
        .await
        .map_err(|refused| match refused {
            JoinError::Store(e) => StartError::Store(e),
            JoinError::Disagrees(why) => StartError::Disagrees(why),
        })?;
    let membership = Arc::new(membership);
    membership.spawn_refresh();
    let _ = state.membership.set(membership.clone());
    Ok(membership)
}
