//! Logging: text or JSON on stderr, filtered by `GRANTRY_LOG` (or `RUST_LOG`), with rmcp's
//! messages capped so that no requestState or connect link reaches a log. (Traces are not
//! made through it: see [`crate::telemetry`].)

use crate::config::LogFormat;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber.
pub(super) fn init(format: LogFormat) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::filter_fn;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let filter = EnvFilter::try_from_env("GRANTRY_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"));
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
    // Global filters, not per-layer ones: per-layer filtering lost events here after
    // filtered-out `log` records (sqlx's), so the audit line of a callback went missing.
    tracing_subscriber::registry()
        .with(filter)
        .with(cap_rmcp)
        .with(fmt)
        .init();
}
