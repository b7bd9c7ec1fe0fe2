//! When the keep-alive next looks at a connection: to retry a failing refresh, to refresh
//! before the provider's idle window closes, or to warn of a hard expiry. Every write of a
//! grant stores its next look; the scheduler reads the grants whose look is due.

use crate::grants::{Due, Health, Reschedule, State};
use crate::providers::Provider;

/// When the scheduler should next look at a connection in `state` (0: never): to retry a
/// failing refresh, to refresh before the idle window closes, or to warn of a hard expiry.
///
/// The refresh falls at 75-85 % of the idle window (jittered), so each window holds exactly
/// one refresh and a failing provider still has days (on Xero's 60) to recover in.
pub(crate) fn next_look(
    provider: &Provider,
    state: State,
    health: &Health,
    last_write: i64,
    expiry_warning_secs: i64,
) -> i64 {
    match state {
        State::NeedsReauth => 0,
        State::RefreshFailing => health.retry_at.max(1),
        State::Active => {
            let refresh = provider.refresh_idle_secs().map(|idle| {
                let from = health.refreshed_at.max(last_write);
                from + idle * 3 / 4 + rand::random_range(0..=(idle / 10).max(0))
            });
            let warn = health
                .hard_expires_at
                .filter(|_| !health.expiry_warned)
                .map(|at| at - expiry_warning_secs);
            // A time already past is "now" (1), never 0 ("never").
            [refresh, warn]
                .into_iter()
                .flatten()
                .min()
                .map_or(0, |at| at.max(1))
        }
    }
}

/// When to look again at a grant found not yet due (a hard expiry is warned of
/// `expiry_warning_secs` before).
pub(crate) fn next_look_of(due: &Due, provider: &Provider, expiry_warning_secs: i64) -> Reschedule {
    Reschedule {
        key: due.key.clone(),
        version: due.version,
        at: next_look(
            provider,
            due.state,
            &due.health,
            due.updated_at,
            expiry_warning_secs,
        ),
    }
}

/// When the idle window needs its refresh (without jitter), for the scheduler's check that a
/// grant it was given is really due.
pub(crate) fn refresh_due(provider: &Provider, health: &Health, last_write: i64) -> Option<i64> {
    provider
        .refresh_idle_secs()
        .map(|idle| health.refreshed_at.max(last_write) + idle * 3 / 4)
}
