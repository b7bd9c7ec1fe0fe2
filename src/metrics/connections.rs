//! The listener's series: open connections, those turned away at a cap, and those closed by
//! a deadline (see `server`).

/// Connections open now.
pub(crate) const OPEN_CONNECTIONS: &str = "grantry_open_connections";
/// Connections answered 503 and closed at accept, by the cap they met (`total`, `address`).
pub(crate) const CONNECTIONS_REFUSED: &str = "grantry_connections_refused_total";
/// Connections closed because a deadline passed, by which (`header`, `idle`).
pub(crate) const CONNECTIONS_EXPIRED: &str = "grantry_connections_expired_total";

pub(super) fn describe() {
    metrics::describe_gauge!(OPEN_CONNECTIONS, "HTTP connections open now");
    metrics::describe_counter!(
        CONNECTIONS_REFUSED,
        "HTTP connections refused at accept, by the cap they met"
    );
    metrics::describe_counter!(
        CONNECTIONS_EXPIRED,
        "HTTP connections closed by a deadline (header read, keep-alive idle)"
    );
    metrics::gauge!(OPEN_CONNECTIONS).set(0.0);
}

/// `open` connections are open now.
pub(crate) fn connections_open(open: usize) {
    metrics::gauge!(OPEN_CONNECTIONS).set(open as f64);
}

/// A connection was refused at the cap `cap` (`total` or `address`).
pub(crate) fn connection_refused(cap: &'static str) {
    metrics::counter!(CONNECTIONS_REFUSED, "cap" => cap).increment(1);
}

/// A connection was closed by the deadline `which` (`header` or `idle`).
pub(crate) fn connection_expired(which: &'static str) {
    metrics::counter!(CONNECTIONS_EXPIRED, "deadline" => which).increment(1);
}
