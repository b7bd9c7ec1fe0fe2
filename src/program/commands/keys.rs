//! `grantry keys status` and `grantry keys rewrap`: key rotation without losing a grant.
//!
//! Rotation: put the new key first in GRANTRY_KEYS and keep the old one after it (every
//! replica); new writes seal under the new key at once. `rewrap` re-seals the rest; once
//! `status` shows the old key unused, drop it from GRANTRY_KEYS.

use std::process::ExitCode;

use crate::config::ServeArgs;
use crate::grants::Grants;
use crate::startup::maintenance_grants;

const BATCH: usize = 500;

/// Resolves the settings, opens the store's grants with the configured keys, and runs `work`
/// on them; errors go to stderr with the exit code of `grantry serve`'s.
fn with_grants<F, Fut>(args: ServeArgs, work: F) -> ExitCode
where
    F: FnOnce(Grants) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let config = match super::configure(args) {
        Ok(config) => config,
        Err(refused) => return refused,
    };
    super::install_tls_provider();
    let runtime = tokio::runtime::Runtime::new().expect("the tokio runtime starts");
    let outcome = runtime.block_on(async move {
        let grants = maintenance_grants(&config)
            .await
            .map_err(|e| e.to_string())?;
        work(grants).await
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("grantry: {message}");
            ExitCode::from(1)
        }
    }
}

pub(crate) fn status(args: ServeArgs) -> ExitCode {
    with_grants(args, |grants| async move {
        let ring = grants.key_ids();
        out!("keys in the ring (the first seals): {}", ring.join(", "));
        for (id, count) in grants.key_usage().await.map_err(|e| e.to_string())? {
            let id = if id.is_empty() {
                "(unknown)".to_owned()
            } else {
                id
            };
            let note = if ring.contains(&id) {
                ""
            } else {
                "  <- not in the ring"
            };
            out!("{count:>8} grant(s) sealed under {id}{note}");
        }
        Ok(())
    })
}

pub(crate) fn rewrap(args: ServeArgs) -> ExitCode {
    with_grants(args, |grants| async move {
        let (mut total, mut batches) = (0, 0);
        loop {
            let report = grants
                .rewrap_batch(BATCH)
                .await
                .map_err(|e| e.to_string())?;
            batches += 1;
            total += report.rewrapped;
            if report.rewrapped == 0 && report.changed_meanwhile == 0 {
                break;
            }
            if batches > 1_000_000 {
                return Err("rewrap is not making progress".into());
            }
        }
        out!("re-sealed {total} grant(s) under the first key");
        Ok(())
    })
}
