//! Logging: text or JSON on stderr, filtered by `GRANTRY_LOG` (or `RUST_LOG`), with rmcp's
//! messages capped so that no requestState or connect link reaches a log; and, when traces
//! are exported, grantry's spans turned into OpenTelemetry spans by the same subscriber (and
//! kept out of the log lines).

use crate::config::LogFormat;
use crate::telemetry::{self, Traces};
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber.
pub(super) fn init(format: LogFormat, traces: Option<&Traces>) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::filter_fn;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let filter = EnvFilter::try_from_env("GRANTRY_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"))
        .add_directive(telemetry::directive(traces.is_some()));
    // rmcp's debug events print whole JSON-RPC messages, requestState included: whatever the
    // filter says (even `rmcp::service=trace`), nothing below info from rmcp is written. Its
    // warning for each error answer prints the error's data, which for a legacy `-32042` is
    // the connect link: those are dropped too (grantry logs its own errors without it).
    let cap_rmcp = filter_fn(|meta| {
        if !meta.target().starts_with("rmcp") {
            return true;
        }
        let fields = meta.fields();
        let error_answer = fields.field("id").is_some() && fields.field("error").is_some();
        *meta.level() <= tracing::Level::INFO && !error_answer
    });
    // Colours only on a terminal: a log file or journal gets plain text.
    use std::io::IsTerminal as _;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let fmt = match format {
        LogFormat::Json => fmt.json().boxed(),
        LogFormat::Text => fmt.boxed(),
    };
    // grantry's spans are the exporter's: the log neither names them nor formats their fields
    // (a per-layer filter only while traces are on; see the note on global filters below).
    let fmt = match traces {
        Some(_) => fmt
            .with_filter(filter_fn(|meta| {
                !(meta.is_span() && meta.target() == telemetry::TARGET)
            }))
            .boxed(),
        None => fmt,
    };
    // Global filters, not per-layer ones: per-layer filtering lost events here after
    // filtered-out `log` records (sqlx's), so the audit line of a callback went missing.
    // Only grantry's own spans are exported (not other crates' spans, nor log events).
    // Per span, only what the attributes say: no code location, thread, target, busy/idle
    // timing or context activation on each poll (inject reads the span's context itself).
    let spans = traces.map(|t| {
        tracing_opentelemetry::layer()
            .with_tracer(t.tracer())
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_context_activation(false)
            .with_filter(filter_fn(|meta| meta.target() == telemetry::TARGET))
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(cap_rmcp)
        .with(fmt)
        .with(spans)
        .init();
}
