//! Cross-site request protection for the Continue POST: a sealed synchronizer token bound to
//! the ticket, plus the browser's own fetch metadata and Origin as defence in depth.

use axum::http::HeaderMap;

use crate::seal::{OpenError, Purpose, Sealer};

const CSRF_TTL_SECS: i64 = 15 * 60;

/// A token for the connect form of ticket `ticket_id`.
pub(super) fn token(sealer: &Sealer, ticket_id: &str, now: i64) -> String {
    sealer.seal_timed(
        Purpose::CsrfToken,
        ticket_id.as_bytes(),
        &(),
        now,
        CSRF_TTL_SECS,
    )
}

/// Checks the form's token.
pub(super) fn check_token(
    sealer: &Sealer,
    ticket_id: &str,
    token: &str,
    now: i64,
) -> Result<(), OpenError> {
    sealer.open_timed::<()>(Purpose::CsrfToken, ticket_id.as_bytes(), token, now)
}

/// Refuses a POST the browser says came from another site, or whose Origin is not ours.
///
/// Our pages send `Referrer-Policy: no-referrer`, under which browsers send `Origin: null` on
/// the form's POST; `null` is accepted unless fetch metadata says the POST is cross-site (the
/// sealed token is the real check).
pub(super) fn same_origin(headers: &HeaderMap, public_origin: &str) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if header("sec-fetch-site").is_some_and(|site| site == "cross-site" || site == "same-site") {
        return false;
    }
    match header("origin") {
        Some("null") | None => true,
        Some(origin) => origin == public_origin,
    }
}
