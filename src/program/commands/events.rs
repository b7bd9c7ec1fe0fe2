//! `grantry events list | retry | replay`: the webhook outbox, for operators.

use std::process::ExitCode;
use std::sync::Arc;

use crate::config::events::EventsCommand;
use crate::outbox::{Filter, OutboxBackend, rfc3339};

pub(crate) fn run(command: EventsCommand) -> ExitCode {
    let config = match super::configure(command.serve_args().clone()) {
        Ok(config) => config,
        Err(refused) => return refused,
    };
    super::install_tls_provider();
    let runtime = tokio::runtime::Runtime::new().expect("the tokio runtime starts");
    let outcome = runtime.block_on(async move {
        let stores = crate::startup::open_stores(&config.store, &config.store_prefix)
            .await
            .map_err(|e| format!("--store (GRANTRY_STORE): {e}"))?;
        act(&command, stores.outbox)
            .await
            .map_err(|e| e.to_string())
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("grantry: {message}");
            ExitCode::from(1)
        }
    }
}

async fn act(
    command: &EventsCommand,
    outbox: Arc<dyn OutboxBackend>,
) -> Result<(), crate::store::StoreError> {
    let now = grantry_base::clock::unix_now();
    match command {
        EventsCommand::List(args) => {
            let filter = Filter {
                status: args.status.as_deref().and_then(|s| s.parse().ok()),
                limit: args.limit,
            };
            let listed = outbox.list(&filter).await?;
            if listed.is_empty() {
                let status = args
                    .status
                    .as_deref()
                    .map(|s| format!("{s} "))
                    .unwrap_or_default();
                eprintln!("grantry: no {status}webhook deliveries");
            }
            for d in listed {
                out!(
                    "{}  {:<26} {:<16} {:<9} attempts={} at={} {}",
                    d.event_id,
                    d.event_type,
                    d.endpoint,
                    d.status.as_str(),
                    d.attempts,
                    rfc3339(d.created_at),
                    d.last_error
                );
            }
        }
        EventsCommand::Retry(args) => {
            let n = outbox.retry_parked(args.event.as_deref(), now).await?;
            out!("{n} parked deliveries queued again");
        }
        EventsCommand::Replay(args) => {
            let since = now - i64::from(args.since_hours) * 3600;
            let n = outbox.replay(since, now).await?;
            out!("{n} delivered deliveries queued again (same webhook-id)");
        }
    }
    Ok(())
}
