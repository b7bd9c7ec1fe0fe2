//! Holding a sign-in round's retry until its sign-in ends (the edge layer keeps the
//! connection alive meanwhile), and how a sign-in stands in the store.

use tokio::time::Instant;

use crate::access::Access;
use crate::connect::ticket::was_opened;
use crate::flows::FlowStatus;
use crate::grants::GrantKey;
use crate::identity::Principal;
use crate::mcp_calls::rounds::Patience;
use crate::mcp_calls::rounds::Rounds;
use crate::mcp_calls::rounds::request_state::StateClaims;

/// How a hold ended.
pub(crate) enum HoldEnd<'a> {
    /// A grant for (principal, provider) is stored: run the tool again, holding this turn
    /// (see [`crate::state::Inner::hold_turns`]) until it has run.
    Connected(tokio::sync::SemaphorePermit<'a>),
    /// The user refused at the provider.
    Denied,
    /// The hold passed with the sign-in still pending, or the attempt failed and the user
    /// must start again from the link.
    StillPending,
    /// The retry accepted the sign-in, yet its link was not opened in
    /// `--unopened-link-wait`: the client showed it to nobody.
    NeverOpened,
}

/// How a sign-in ended, as the store tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignInEnd {
    Connected,
    /// The user refused at the provider.
    Denied,
    /// That attempt cannot finish any more (its replica may have died redeeming the code):
    /// the same link starts a new one.
    Failed,
}

/// How the sign-in of ticket `ticket_id` for a connection at the key's provider serving
/// `access` stands in the store now, if it has ended. What a held retry and a legacy
/// session's `elicitation/complete` both go by.
pub(crate) async fn ended(
    rounds: &Rounds<'_>,
    key: &GrantKey,
    ticket_id: &str,
    access: Access,
) -> Option<SignInEnd> {
    // Every grant at the provider usable (one at least): whatever a reading call needed is
    // there. One still needing a sign-in, or a call asking for more access on a usable one,
    // leaves it to the flow to say this sign-in ended.
    if !access.writes_at_provider() && all_usable(rounds, key).await {
        return Some(SignInEnd::Connected);
    }
    let flow = rounds.flows.latest_for_ticket(ticket_id).await.ok()??;
    match flow.status {
        FlowStatus::Connected => Some(SignInEnd::Connected),
        FlowStatus::Denied => Some(SignInEnd::Denied),
        FlowStatus::Failed | FlowStatus::Superseded => Some(SignInEnd::Failed),
        FlowStatus::Redeeming if flow.is_stuck(grantry_base::clock::unix_now()) => {
            Some(SignInEnd::Failed)
        }
        _ => None,
    }
}

/// How the sign-in behind `claims` stands, if it has ended: connected (with a turn to finish
/// the call), denied, or never to finish (asked again now rather than held for nothing).
async fn settled<'a>(
    rounds: &Rounds<'a>,
    key: &GrantKey,
    claims: &StateClaims,
) -> Option<HoldEnd<'a>> {
    let turn = rounds
        .hold_turns
        .acquire()
        .await
        .expect("the hold turns are never closed");
    Some(
        match ended(rounds, key, &claims.ticket_id, claims.access).await? {
            SignInEnd::Connected => HoldEnd::Connected(turn),
            SignInEnd::Denied => HoldEnd::Denied,
            SignInEnd::Failed => HoldEnd::StillPending,
        },
    )
}

/// Whether every grant of the key's principal at its provider is usable (one at least); a
/// store that cannot say is taken for no (the flow still tells).
async fn all_usable(rounds: &Rounds<'_>, key: &GrantKey) -> bool {
    match rounds
        .tools
        .connections
        .all_usable(&key.principal, &key.provider)
        .await
    {
        Ok(usable) => usable,
        Err(e) => {
            crate::metrics::store_error("hold");
            tracing::warn!(error = %e, "store error while holding a retry");
            false
        }
    }
}

/// Waits for the sign-in behind `claims` to finish, at most `--retry-hold`; with
/// [`Patience::Look`], only looks how it stands.
pub(crate) async fn hold<'a>(
    rounds: &Rounds<'a>,
    principal: &Principal,
    claims: &StateClaims,
    patience: Patience,
) -> HoldEnd<'a> {
    let key = GrantKey::sole(principal, &claims.provider);
    if patience == Patience::Look {
        return settled(rounds, &key, claims)
            .await
            .unwrap_or(HoldEnd::StillPending);
    }
    // Held retries are bounded, in all and per principal (so one user's held calls never
    // crowd out another's): past a cap, the client is simply asked again at once.
    let _place = match rounds.held.take(Some(principal.tag().into())) {
        Ok(place) => place,
        Err(exceeded) => {
            tracing::warn!(
                cap = ?exceeded,
                principal = %principal.tag(),
                "too many held retries; answering at once"
            );
            return HoldEnd::StillPending;
        }
    };
    let _counted = crate::metrics::HeldRetry::start();
    let deadline = Instant::now() + rounds.settings.retry_hold;
    // Until then the link may still be on its way to a browser; after, it must have been opened.
    let mut open_by = Some(Instant::now() + rounds.settings.unopened_link_wait);
    loop {
        // Subscribe before reading, so a grant landing in between still wakes us.
        let mut waiter = rounds.tools.connections.landed().subscribe();
        if let Some(end) = settled(rounds, &key, claims).await {
            return end;
        }
        if let Some(by) = open_by
            && Instant::now() >= by
        {
            if !link_opened(rounds, &claims.ticket_id).await {
                crate::metrics::sign_in(&claims.provider, "link_not_opened");
                return HoldEnd::NeverOpened;
            }
            open_by = None;
        }
        if Instant::now() >= deadline {
            return HoldEnd::StillPending;
        }
        let wake = open_by.map_or(deadline, |by| by.min(deadline));
        tokio::select! {
            _ = waiter.changed(&key) => {}
            _ = tokio::time::sleep(rounds.settings.hold_poll_interval) => {}
            _ = tokio::time::sleep_until(wake) => {}
        }
    }
}

/// Whether a ticket's link was opened; a store that cannot say is taken for yes (the hold
/// goes on as before rather than cut a sign-in short).
async fn link_opened(rounds: &Rounds<'_>, ticket_id: &str) -> bool {
    match was_opened(rounds.leases, ticket_id).await {
        Ok(opened) => opened,
        Err(e) => {
            crate::metrics::store_error("hold");
            tracing::warn!(error = %e, "store error while asking whether a link was opened");
            true
        }
    }
}
