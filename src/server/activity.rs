//! What one connection is doing, and when it has done nothing for too long.
//!
//! A connection is *busy* while a request is in flight: from its complete head until its
//! answer's body is done (a held retry's SSE stream and a legacy GET stream included, however
//! long they last). Otherwise it has a deadline:
//!
//! - a fresh connection, or one that has sent part of its next request's head: the whole head
//!   within the header-read timeout (counted from the accept, or from the first byte);
//! - a keep-alive connection between requests: the next byte within the idle timeout.
//!
//! A busy connection whose client has stopped reading (the socket takes no more of the
//! answer) has the idle timeout too, counted from the write that could not go out: a stream
//! nobody reads is closed, not held for ever.
//!
//! The socket's reads ([`Watched`]), the start of each request and the end of each answer
//! ([`Busy`], carried by the answer's body in a [`super::Tracked`]) move the deadline;
//! [`expiry`] waits for it.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// No time recorded (the connection is between a boundary and its next byte).
const NONE: u64 = u64::MAX;

/// The two deadlines a connection that is not busy runs against.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timeouts {
    pub(crate) header_read: Duration,
    pub(crate) idle: Duration,
}

/// Why a connection was closed by its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expired {
    /// A request head (or a fresh connection's first one) did not arrive in time.
    Header,
    /// A keep-alive connection sent nothing for the idle timeout.
    Idle,
    /// The client read none of the answer for the idle timeout.
    Stalled,
}

impl Expired {
    pub(super) fn label(self) -> &'static str {
        match self {
            Expired::Header => "header",
            Expired::Idle => "idle",
            Expired::Stalled => "stalled",
        }
    }
}

/// One connection's activity. Times are milliseconds since the accept.
pub(super) struct Activity {
    accepted: Instant,
    in_flight: AtomicU32,
    /// When the current request head began to arrive (`NONE`: no byte yet).
    head_started: AtomicU64,
    /// When the last answer ended (0: the accept).
    boundary: AtomicU64,
    /// Whether a request was ever served (then the idle timeout applies between requests).
    served: AtomicU32,
    /// Since when the socket has taken none of what was written (`NONE`: it takes it).
    write_blocked_since: AtomicU64,
}

impl Activity {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            accepted: Instant::now(),
            in_flight: AtomicU32::new(0),
            head_started: AtomicU64::new(NONE),
            boundary: AtomicU64::new(0),
            served: AtomicU32::new(0),
            write_blocked_since: AtomicU64::new(NONE),
        })
    }

    fn now_ms(&self) -> u64 {
        self.accepted.elapsed().as_millis() as u64
    }

    /// Bytes arrived: between requests, they start the next request's head.
    fn read_some(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0
            && self.head_started.load(Ordering::Relaxed) == NONE
        {
            self.head_started.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// A write could not go out (`blocked`), or went out.
    fn wrote(&self, blocked: bool) {
        if !blocked {
            self.write_blocked_since.store(NONE, Ordering::Relaxed);
        } else if self.write_blocked_since.load(Ordering::Relaxed) == NONE {
            self.write_blocked_since
                .store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// A request's head is complete: the connection is busy until the returned guard drops
    /// (with the answer's body).
    pub(super) fn request_started(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.head_started.store(NONE, Ordering::Relaxed);
        self.served.store(1, Ordering::Relaxed);
        Busy(self.clone())
    }

    /// When the connection expires if nothing happens, and why; `None` while busy with a
    /// client that reads.
    fn deadline(&self, timeouts: &Timeouts) -> Option<(u64, Expired)> {
        let ms = |d: Duration| d.as_millis() as u64;
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            let blocked = self.write_blocked_since.load(Ordering::Relaxed);
            return (blocked != NONE).then(|| (blocked + ms(timeouts.idle), Expired::Stalled));
        }
        let head_started = self.head_started.load(Ordering::Relaxed);
        if head_started != NONE {
            return Some((head_started + ms(timeouts.header_read), Expired::Header));
        }
        let boundary = self.boundary.load(Ordering::Relaxed);
        if self.served.load(Ordering::Relaxed) == 0 {
            Some((boundary + ms(timeouts.header_read), Expired::Header))
        } else {
            Some((boundary + ms(timeouts.idle), Expired::Idle))
        }
    }
}

/// Resolves when the connection has passed its deadline without being busy.
pub(super) async fn expiry(activity: &Activity, timeouts: Timeouts) -> Expired {
    loop {
        let now = activity.now_ms();
        let wait = match activity.deadline(&timeouts) {
            Some((deadline, why)) if now >= deadline => return why,
            Some((deadline, _)) => Duration::from_millis(deadline - now),
            // Busy: look again later (a busy connection costs one timer wake per period).
            None => timeouts.header_read,
        };
        tokio::time::sleep(wait).await;
    }
}

/// Marks a request in flight; dropped when its answer's body is done (or dropped).
pub(super) struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let activity = &self.0;
        activity
            .boundary
            .store(activity.now_ms(), Ordering::Relaxed);
        activity.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

pin_project_lite::pin_project! {
    /// The connection's socket, telling its [`Activity`] when bytes arrive.
    pub(crate) struct Watched<T> {
        #[pin]
        inner: T,
        activity: Arc<Activity>,
    }
}

impl<T> Watched<T> {
    pub(super) fn new(inner: T, activity: Arc<Activity>) -> Self {
        Self { inner, activity }
    }
}

impl<T: AsyncRead> AsyncRead for Watched<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.project();
        let before = buf.filled().len();
        let polled = this.inner.poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.read_some();
        }
        polled
    }
}

impl<T: AsyncWrite> AsyncWrite for Watched<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let polled = this.inner.poll_write(cx, buf);
        this.activity.wrote(polled.is_pending());
        polled
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let polled = this.inner.poll_write_vectored(cx, bufs);
        this.activity.wrote(polled.is_pending());
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts {
        header_read: Duration::from_millis(100),
        idle: Duration::from_millis(1000),
    };

    #[test]
    fn a_fresh_connection_has_the_header_deadline() {
        let activity = Activity::new();
        assert_eq!(activity.deadline(&TIMEOUTS), Some((100, Expired::Header)));
    }

    #[test]
    fn busy_has_no_deadline_and_idle_follows_the_answer() {
        let activity = Activity::new();
        let busy = activity.request_started();
        assert_eq!(activity.deadline(&TIMEOUTS), None);
        drop(busy);
        let (deadline, why) = activity.deadline(&TIMEOUTS).unwrap();
        assert_eq!(why, Expired::Idle);
        assert!((1000..1100).contains(&deadline), "{deadline}");
    }

    #[tokio::test]
    async fn a_busy_connection_whose_client_stops_reading_expires_after_the_idle_timeout() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let activity = Activity::new();
        let (ours, mut client) = tokio::io::duplex(8);
        let mut socket = std::pin::pin!(Watched::new(ours, activity.clone()));
        let _busy = activity.request_started();
        socket.write_all(b"12345678").await.unwrap();
        assert_eq!(activity.deadline(&TIMEOUTS), None, "read so far");
        // The client reads nothing more: the next write cannot go out.
        let blocked = tokio::time::timeout(Duration::from_millis(50), socket.write_all(b"9")).await;
        assert!(blocked.is_err(), "the write waits");
        let (deadline, why) = activity.deadline(&TIMEOUTS).unwrap();
        assert_eq!(why, Expired::Stalled);
        assert!((1000..1200).contains(&deadline), "{deadline}");
        // It reads again: busy, no deadline.
        let mut buffer = [0u8; 8];
        client.read_exact(&mut buffer).await.unwrap();
        socket.write_all(b"9").await.unwrap();
        assert_eq!(activity.deadline(&TIMEOUTS), None);
    }

    #[test]
    fn the_first_byte_of_the_next_head_starts_the_header_deadline() {
        let activity = Activity::new();
        drop(activity.request_started());
        activity.read_some();
        let (deadline, why) = activity.deadline(&TIMEOUTS).unwrap();
        assert_eq!(why, Expired::Header);
        assert!(deadline < 1000, "{deadline}");
        // Bytes read while busy (a pipelined request) do not start a deadline.
        let busy = activity.request_started();
        activity.read_some();
        assert_eq!(activity.head_started.load(Ordering::Relaxed), NONE);
        drop(busy);
    }
}
