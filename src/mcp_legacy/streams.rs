//! Legacy-era GET streams (`GET /mcp` naming a session): how many are open, so that no one
//! can hold connections with them without limit.
//!
//! - **Per session**, at most [`STREAMS_PER_SESSION`]: clients open one, and a second while
//!   reconnecting. A third is refused with 409, as the official TypeScript SDK's server
//!   refuses a second one.
//! - **Per principal**, each stream takes a place in the pool of requests held open (the
//!   same as retries waiting for a sign-in): a principal at their share gets 429, and at
//!   the process's total everyone gets 503.
//!
//! A stream gives its places back when its answer ends or the client goes away.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use axum::response::Response;

use crate::quota::{Exceeded, Place, Quota};

/// The most GET streams one session may have open at once.
const STREAMS_PER_SESSION: usize = 2;

/// The open GET streams, by session.
#[derive(Clone)]
pub(crate) struct Streams {
    held: Arc<Quota<String>>,
    by_session: Arc<Mutex<HashMap<String, usize>>>,
}

/// What an open stream holds; dropped with its answer's body.
pub(crate) struct Open {
    _place: Place<String>,
    by_session: Arc<Mutex<HashMap<String, usize>>>,
    session: String,
}

/// Why a stream was not opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The session has as many streams open as it may.
    Session,
    /// The principal holds their whole share of requests held open.
    Share,
    /// The process holds as many requests open as it may.
    Total,
}

impl Streams {
    pub(crate) fn new(held: Arc<Quota<String>>) -> Self {
        Self {
            held,
            by_session: Arc::default(),
        }
    }

    /// Room for one more stream of `session`, opened by `owner` (a principal's tag).
    pub(crate) fn open(&self, session: &str, owner: &str) -> Result<Open, Refused> {
        let mut by_session = lock(&self.by_session);
        let open = by_session.get(session).copied().unwrap_or(0);
        if open >= STREAMS_PER_SESSION {
            return Err(Refused::Session);
        }
        let place = self
            .held
            .take(Some(owner.to_owned()))
            .map_err(|exceeded| match exceeded {
                Exceeded::Share => Refused::Share,
                Exceeded::Total => Refused::Total,
            })?;
        by_session.insert(session.to_owned(), open + 1);
        Ok(Open {
            _place: place,
            by_session: self.by_session.clone(),
            session: session.to_owned(),
        })
    }

    /// Streams open now for `session`.
    #[cfg(test)]
    fn open_for(&self, session: &str) -> usize {
        lock(&self.by_session).get(session).copied().unwrap_or(0)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut by_session = lock(&self.by_session);
        if let Some(open) = by_session.get_mut(&self.session) {
            *open -= 1;
            if *open == 0 {
                by_session.remove(&self.session);
            }
        }
    }
}

impl Refused {
    /// The answer: a plain-text status that says what to do.
    pub(crate) fn into_response(self) -> Response {
        let (status, text) = match self {
            Self::Session => (
                StatusCode::CONFLICT,
                "Conflict: this session already has as many GET streams open as it may (2); \
                 close one first",
            ),
            Self::Share => (
                StatusCode::TOO_MANY_REQUESTS,
                "Too Many Requests: you hold as many streams and waiting calls open as one \
                 user may; close one, or retry in a minute",
            ),
            Self::Total => (
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: grantry holds as many streams and waiting calls open \
                 as it may; retry in a minute",
            ),
        };
        crate::mcp_legacy::plain_refusal(status, text, self != Self::Session)
    }
}

fn lock(map: &Mutex<HashMap<String, usize>>) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
    map.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_has_two_streams_and_a_principal_their_share() {
        let streams = Streams::new(Quota::new(10, 3));
        let first = streams.open("s1", "alice").unwrap();
        let _second = streams.open("s1", "alice").unwrap();
        assert_eq!(streams.open("s1", "alice").err(), Some(Refused::Session));
        let _third = streams.open("s2", "alice").unwrap();
        assert_eq!(
            streams.open("s3", "alice").err(),
            Some(Refused::Share),
            "her share is spent across sessions"
        );
        assert!(streams.open("s4", "bob").is_ok(), "bob is not affected");
        drop(first);
        assert_eq!(streams.open_for("s1"), 1);
        assert!(streams.open("s1", "alice").is_ok(), "a place came back");
    }

    #[test]
    fn a_refused_stream_takes_no_place() {
        let held = Quota::new(2, 2);
        let streams = Streams::new(held.clone());
        let _a = streams.open("s", "alice").unwrap();
        let _b = streams.open("s", "alice").unwrap();
        assert_eq!(streams.open("s", "alice").err(), Some(Refused::Session));
        assert_eq!(held.taken(), 2);
        assert_eq!(streams.open("t", "bob").err(), Some(Refused::Total));
    }
}
