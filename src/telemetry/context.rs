//! Which request a span belongs to, without entering spans. The span of the MCP request or
//! sign-in step being served rides in a task-local ([`in_request`]); the spans made while
//! serving it (store operations, requests grantry makes) name it as their parent
//! ([`parent`]), and work spawned for it takes it along ([`carried`]).
//!
//! `Instrument` would enter the request's span on every poll of its future instead: each
//! layer then looks the span up on every enter and exit, and the OpenTelemetry layer reads the
//! clock and takes a lock. That was most of what traces cost; a task-local costs a swap.

use std::future::Future;

tokio::task_local! {
    static REQUEST: tracing::Span;
}

/// Runs `work` as the request `span` stands for: spans made inside are its children.
pub async fn in_request<F: Future>(span: tracing::Span, work: F) -> F::Output {
    REQUEST.scope(span, work).await
}

/// `work`, to be spawned, in the request this task serves (if any): the request's span is
/// taken now, where the work is made.
pub fn carried<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let request = REQUEST.try_with(Clone::clone).ok();
    async move {
        match request {
            Some(span) => REQUEST.scope(span, work).await,
            None => work.await,
        }
    }
}

/// The span of the request this task serves, as a parent for spans made in it; `None`
/// outside a request (the keep-alive, the webhook deliverer): their spans are roots.
pub fn parent() -> Option<tracing::Id> {
    REQUEST.try_with(tracing::Span::id).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[tokio::test]
    async fn spans_made_in_a_request_and_in_work_spawned_for_it_know_it() {
        let subscriber = tracing_subscriber::registry();
        let _default = tracing::subscriber::set_default(
            subscriber.with(tracing_subscriber::fmt::layer().with_test_writer()),
        );
        let request = tracing::info_span!("request");
        let id = request.id();
        assert!(id.is_some());
        assert_eq!(parent(), None, "outside a request");
        let seen = in_request(request, async {
            let inside = parent();
            let spawned = tokio::spawn(carried(async { parent() })).await.unwrap();
            let plain = tokio::spawn(async { parent() }).await.unwrap();
            (inside, spawned, plain)
        })
        .await;
        assert_eq!(seen, (id.clone(), id, None));
    }
}
