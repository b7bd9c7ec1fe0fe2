//! A body that holds something until it is done: a connection stays busy, a legacy session
//! stays in use, for as long as an answer streams.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

pin_project_lite::pin_project! {
    /// `inner`, dropping `guard` as soon as it has given its last frame (or failed), or when
    /// dropped unfinished.
    pub(crate) struct Tracked<B, G> {
        #[pin]
        inner: B,
        guard: Option<G>,
    }
}

impl<B, G> Tracked<B, G> {
    pub(crate) fn new(inner: B, guard: G) -> Self {
        Self {
            inner,
            guard: Some(guard),
        }
    }
}

impl<B: Body<Data = Bytes>, G> Body for Tracked<B, G> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        if let Poll::Ready(None | Some(Err(_))) = polled {
            this.guard.take(); // done now, not when the server gets round to dropping the body
        }
        polled
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    struct Flag(Arc<AtomicBool>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    #[tokio::test]
    async fn the_guard_goes_when_the_last_frame_is_read() {
        let dropped = Arc::new(AtomicBool::new(false));
        let body = Tracked::new(axum::body::Body::from("answer"), Flag(dropped.clone()));
        let mut body = std::pin::pin!(body);
        let first = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await;
        assert!(first.is_some());
        assert!(
            !dropped.load(Ordering::Relaxed),
            "held while the body has frames"
        );
        assert!(
            std::future::poll_fn(|cx| body.as_mut().poll_frame(cx))
                .await
                .is_none()
        );
        assert!(
            dropped.load(Ordering::Relaxed),
            "gone at the end, body still alive"
        );
    }
}
