//! Which request a span belongs to. The span of the MCP request or sign-in step being served
//! rides in a task-local ([`in_request`]); the spans made while serving it name it as their
//! parent ([`parent`]), and work spawned for it takes it along ([`carried`]).

use std::future::Future;

use opentelemetry::Context;

use super::Traced;

tokio::task_local! {
    static REQUEST: Traced;
}

/// Runs `work` as the request `span` stands for: spans made inside are its children.
pub(crate) async fn in_request<F: Future>(span: Traced, work: F) -> F::Output {
    REQUEST.scope(span, work).await
}

/// `work`, to be spawned, in the request this task serves (if any): the request's span is
/// taken now, where the work is made.
pub(crate) fn carried<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let request = REQUEST.try_with(Clone::clone).ok();
    async move {
        match request {
            Some(span) => REQUEST.scope(span, work).await,
            None => work.await,
        }
    }
}

/// The context of the request this task serves, as the parent of spans made in it; an empty
/// one outside a request (the keep-alive, the webhook deliverer): their spans are roots.
pub(crate) fn parent() -> Context {
    REQUEST
        .try_with(|span| span.context().clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanContext, TraceContextExt, TraceFlags, TraceState};
    use opentelemetry::trace::{SpanId, TraceId};

    fn a_request() -> Traced {
        let remote = SpanContext::new(
            TraceId::from(7),
            SpanId::from(9),
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        Traced(Context::new().with_remote_span_context(remote))
    }

    fn trace_of(cx: &Context) -> TraceId {
        cx.span().span_context().trace_id()
    }

    #[tokio::test]
    async fn spans_made_in_a_request_and_in_work_spawned_for_it_know_it() {
        assert_eq!(trace_of(&parent()), TraceId::INVALID, "outside a request");
        let seen = in_request(a_request(), async {
            let inside = trace_of(&parent());
            let spawned = tokio::spawn(carried(async { trace_of(&parent()) }));
            let plain = tokio::spawn(async { trace_of(&parent()) });
            (inside, spawned.await.unwrap(), plain.await.unwrap())
        })
        .await;
        assert_eq!(seen, (TraceId::from(7), TraceId::from(7), TraceId::INVALID));
    }
}
