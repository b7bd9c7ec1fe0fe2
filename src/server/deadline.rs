//! A deadline on reading a request's body, for every route: a client that sends its body a
//! byte at a time gets an error (and its connection closed) once the deadline passes, instead
//! of holding the connection as long as it likes.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body did not arrive within the deadline.
#[derive(Debug, thiserror::Error)]
#[error("the request body was not received within {} s", .0.as_secs())]
pub(crate) struct BodyTimedOut(pub Duration);

/// Whether a body-reading error (as axum reports it) was the deadline.
pub(crate) fn is_timeout(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<BodyTimedOut>() {
            return true;
        }
        source = e.source();
    }
    false
}

pin_project_lite::pin_project! {
    /// `inner`, failing with [`BodyTimedOut`] if it is not complete by the deadline.
    pub(crate) struct DeadlineBody<B> {
        #[pin]
        inner: B,
        deadline: Instant,
        limit: Duration,
        // Made only when the body must be waited for: most bodies arrive with their head.
        sleep: Option<Pin<Box<Sleep>>>,
    }
}

impl<B> DeadlineBody<B> {
    /// `inner` must be read within `limit` from now.
    pub(crate) fn new(inner: B, limit: Duration) -> Self {
        Self {
            inner,
            deadline: Instant::now() + limit,
            limit,
            sleep: None,
        }
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.project();
        if let Poll::Ready(frame) = this.inner.poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let deadline = *this.deadline;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut(*this.limit))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_trickling_body_fails_at_the_deadline_and_a_complete_one_passes() {
        use futures::SinkExt;
        let (mut sender, received) = futures::channel::mpsc::channel::<Result<Bytes, BoxError>>(1);
        sender.send(Ok(Bytes::from_static(b"x"))).await.unwrap();
        let trickle = axum::body::Body::from_stream(received);
        let limit = Duration::from_millis(50);
        let body = axum::body::Body::new(DeadlineBody::new(trickle, limit));
        let error = axum::body::to_bytes(body, 1024).await.unwrap_err();
        assert!(is_timeout(&error), "{error}");
        drop(sender);

        let whole =
            axum::body::Body::new(DeadlineBody::new(axum::body::Body::from("complete"), limit));
        assert_eq!(
            &axum::body::to_bytes(whole, 1024).await.unwrap()[..],
            b"complete"
        );
    }
}
