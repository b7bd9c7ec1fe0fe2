//! The HTTP listener: grantry's own accept loop (HTTP/1.1, as `axum::serve` spoke it), so that
//! nobody who can reach the port can hold its connections without limit.
//!
//! - **Caps.** At most `--max-connections` open at once, and `--max-connections-per-address`
//!   from one client address ([`slots`]). Past a cap a new connection is answered `503` and
//!   closed at once; the ones in progress carry on.
//! - **Deadlines** ([`activity`]): a request head within `--header-read-timeout` (of the accept,
//!   or of its first byte), the next request of a keep-alive connection within
//!   `--idle-timeout`, and a request body within `--body-read-timeout` ([`deadline`]). A
//!   connection answering a request is never idle, however long its answer streams (held
//!   retries and legacy GET streams send keep-alives anyway), unless its client stops
//!   reading: an answer the socket takes none of for `--idle-timeout` is closed.
//! - **Hosts** ([`hosts`]): the `Host` names grantry answers to, against DNS rebinding.
//! - **File descriptors.** [`raise_open_file_limit`] lifts the soft `RLIMIT_NOFILE` to the hard
//!   one; the default total cap stays well below it, so accepting never fails for want of one.

mod activity;
pub(crate) mod deadline;
pub(crate) mod hosts;
mod slots;
mod tracked;

pub(crate) use tracked::Tracked;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt;

use self::activity::{Activity, Timeouts, Watched};
use self::deadline::DeadlineBody;
use self::slots::{Slot, Slots};
use crate::config::ConnectionLimits;
use crate::quota::Exceeded;

/// File descriptors kept back from the connection cap: store pools, provider calls, files.
const RESERVED_FILES: u64 = 512;
/// The default total cap, however high the file limit: each open connection costs memory.
const DEFAULT_MAX_CONNECTIONS: u64 = 8192;
/// The least default total cap.
const MIN_MAX_CONNECTIONS: u64 = 64;
/// What a connection over a cap reads before it is closed.
const OVER_CAPACITY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
    Content-Length: 0\r\nConnection: close\r\n\r\n";

/// The open-file limit after [`raise_open_file_limit`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenFiles {
    pub(crate) limit: u64,
    /// The soft limit before it was raised, when it was.
    pub(crate) raised_from: Option<u64>,
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit, and says what it is now.
pub(crate) fn raise_open_file_limit() -> std::io::Result<OpenFiles> {
    let (before, _) = rlimit::Resource::NOFILE.get()?;
    let limit = rlimit::increase_nofile_limit(u64::MAX)?;
    Ok(OpenFiles {
        limit,
        raised_from: (limit > before).then_some(before),
    })
}

/// The total cap when none is configured: the file limit less a reserve, within bounds.
pub(crate) fn default_max_connections(files: OpenFiles) -> usize {
    files
        .limit
        .saturating_sub(RESERVED_FILES)
        .clamp(MIN_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS) as usize
}

/// How the listener treats connections, resolved at start.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) limits: ConnectionLimits,
    pub(crate) max_connections: usize,
    /// Peers counted only towards the total cap.
    pub(crate) trusted_proxies: Vec<ipnet::IpNet>,
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets the requests in progress
/// finish (new ones are not taken; idle connections close at once).
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    settings: Settings,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Arc::new(Slots::new(
        settings.max_connections,
        settings.limits.max_connections_per_address,
        settings.trusted_proxies.clone(),
    ));
    let settings = Arc::new(settings);
    let (stop_tx, stop_rx) = watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let slot = match slots.take(peer.ip()) {
            Ok(slot) => slot,
            Err(refused) => {
                turn_away(stream, refused, &settings);
                continue;
            }
        };
        crate::metrics::connections_open(slots.open());
        let admitted = Admitted {
            stream,
            peer,
            slot,
            slots: slots.clone(),
        };
        tokio::spawn(connection(
            admitted,
            app.clone(),
            settings.clone(),
            stop_rx.clone(),
        ));
    }
    drop(listener);
    drop(stop_rx);
    // Every connection task holds a receiver: ask them to finish, then wait until they have.
    let _ = stop_tx.send(());
    stop_tx.closed().await;
}

/// An accepted connection and the place it holds under the caps.
struct Admitted {
    stream: TcpStream,
    peer: SocketAddr,
    slot: Slot,
    slots: Arc<Slots>,
}

/// Serves one connection until it ends, its deadline passes, or shutdown finishes it.
async fn connection(
    admitted: Admitted,
    app: Router,
    settings: Arc<Settings>,
    mut stop: watch::Receiver<()>,
) {
    let Admitted {
        stream,
        peer,
        slot,
        slots,
    } = admitted;
    let _ = stream.set_nodelay(true);
    let activity = Activity::new();
    let io = TokioIo::new(Watched::new(stream, activity.clone()));
    let body_limit = settings.limits.body_read_timeout;
    let on_request = activity.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let busy = on_request.request_started();
        let mut request = request.map(|body| Body::new(DeadlineBody::new(body, body_limit)));
        // The peer address feeds the per-address rate limits, as `axum::serve` provided it.
        request.extensions_mut().insert(ConnectInfo(peer));
        let answer = app.clone().oneshot(request);
        async move {
            let response = answer.await?;
            Ok::<_, std::convert::Infallible>(response.map(|body| Tracked::new(body, busy)))
        }
    });
    let timeouts = Timeouts {
        header_read: settings.limits.header_read_timeout,
        idle: settings.limits.idle_timeout,
    };
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let mut expiry = std::pin::pin!(activity::expiry(&activity, timeouts));
    let mut stopping = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::trace!(error = %e, "connection ended with an error");
                }
                break;
            }
            why = &mut expiry => {
                // Not busy, or its client reads nothing: closing it loses nothing it would read.
                crate::metrics::connection_expired(why.label());
                tracing::debug!(reason = why.label(), "connection closed by its deadline");
                break;
            }
            changed = stop.changed(), if !stopping => {
                let _ = changed;
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
    drop(slot);
    crate::metrics::connections_open(slots.open());
}

/// Answers a connection over a cap with a 503 (if the socket takes it at once) and closes it.
fn turn_away(stream: TcpStream, refused: Exceeded, settings: &Settings) {
    let _ = stream.try_write(OVER_CAPACITY);
    drop(stream);
    crate::metrics::connection_refused(slots::label(refused));
    if should_log_refusal() {
        tracing::warn!(
            cap = slots::label(refused),
            max_connections = settings.max_connections,
            max_per_address = settings.limits.max_connections_per_address,
            "connection refused: at the cap (logged at most once a minute)"
        );
    }
}

/// At most one refusal warning a minute: a flood must not become a flood of log lines.
fn should_log_refusal() -> bool {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = grantry_base::clock::unix_now().max(0) as u64;
    let last = LAST.load(Ordering::Relaxed);
    now >= last + 60
        && LAST
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

/// An accept that failed: per-connection errors are passed over; running out of file
/// descriptors (or memory) waits a moment rather than spinning.
async fn accept_failed(error: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %error, "cannot accept connections; retrying in 50 ms");
    tokio::time::sleep(Duration::from_millis(50)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_keeps_a_reserve_of_file_descriptors() {
        let cap = |limit| {
            default_max_connections(OpenFiles {
                limit,
                raised_from: None,
            })
        };
        assert_eq!(cap(1024), 512);
        assert_eq!(cap(1_048_576), 8192);
        assert_eq!(cap(256), 64);
    }
}
