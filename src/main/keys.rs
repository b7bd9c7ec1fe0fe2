//! `grantry keys status` and `grantry keys rewrap`: key rotation without losing a grant.
//!
//! Rotation: put the new key first in GRANTRY_KEYS and keep the old one after it (every
//! replica); new writes seal under the new key at once. `rewrap` re-seals the rest; once
//! `status` shows the old key unused, drop it from GRANTRY_KEYS.

use std::process::ExitCode;

use grantry::config::{Config, ServeArgs};
use grantry::state::maintenance_grants;

const BATCH: usize = 500;

fn config(args: ServeArgs) -> Result<Config, ExitCode> {
    Config::resolve(args).map_err(|e| {
        eprintln!("grantry: {e}");
        ExitCode::from(2)
    })
}

fn run<F: std::future::Future<Output = Result<(), String>>>(work: F) -> ExitCode {
    super::install_tls_provider();
    let runtime = tokio::runtime::Runtime::new().expect("the tokio runtime starts");
    match runtime.block_on(work) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("grantry: {message}");
            ExitCode::from(1)
        }
    }
}

pub fn status(args: ServeArgs) -> ExitCode {
    let config = match config(args) {
        Ok(config) => config,
        Err(code) => return code,
    };
    run(async move {
        let grants = maintenance_grants(&config)
            .await
            .map_err(|e| e.to_string())?;
        let ring = grants.key_ids();
        println!("keys in the ring (the first seals): {}", ring.join(", "));
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
            println!("{count:>8} grant(s) sealed under {id}{note}");
        }
        Ok(())
    })
}

pub fn rewrap(args: ServeArgs) -> ExitCode {
    let config = match config(args) {
        Ok(config) => config,
        Err(code) => return code,
    };
    run(async move {
        let grants = maintenance_grants(&config)
            .await
            .map_err(|e| e.to_string())?;
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
        println!("re-sealed {total} grant(s) under the first key");
        Ok(())
    })
}
