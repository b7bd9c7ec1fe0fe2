//! The key ring at start: from `GRANTRY_KEYS`, or, on SQLite, the data directory's own key
//! (generated on first start, 0600; one others may read is refused); and the check that no
//! grant is sealed under a key the ring no longer holds.

use std::path::Path;

use super::StartError;
use crate::config::Config;
use crate::seal::{KeyRing, Sealer};
use crate::store::StoreUrl;

/// The data directory, made (or kept) private to grantry's user.
pub(super) fn prepare_data_dir(dir: &Path) -> Result<(), StartError> {
    grantry_base::private_files::prepare(dir).map_err(|e| {
        StartError::Keys(format!(
            "--data-dir (GRANTRY_DATA_DIR): cannot make {} private to this user: {e}",
            dir.display()
        ))
    })
}

/// Refuses to run when some grants are sealed under a key the ring no longer holds: those
/// grants would be lost to their users. Says how many, and how to retire a key safely.
pub(super) async fn check_no_key_retired_in_use(
    sealer: &Sealer,
    grants: &dyn crate::grants::GrantBackend,
) -> Result<(), StartError> {
    let known = sealer.key_ring().key_ids();
    let orphaned: Vec<String> = grants
        .key_usage()
        .await?
        .into_iter()
        .filter(|(id, _)| !id.is_empty() && !known.contains(id))
        .map(|(id, count)| format!("{count} grant(s) under key {id}"))
        .collect();
    if orphaned.is_empty() {
        return Ok(());
    }
    Err(StartError::Keys(format!(
        "{} are sealed with a key GRANTRY_KEYS no longer holds. Put that key back (after the \
         new one), run `grantry keys rewrap`, and retire it only when `grantry keys status` \
         shows it unused",
        orphaned.join(", ")
    )))
}

const KEY_FILE: &str = "sealing.key";

/// Keys from configuration, or (on SQLite, one replica) the data directory's own key,
/// generated on first start. A shared store needs keys given: each replica would otherwise
/// make its own, and none could open what the others sealed.
pub(super) fn load_key_ring(config: &Config) -> Result<KeyRing, StartError> {
    if let Some(keys) = &config.keys {
        return KeyRing::from_encoded(&keys.0).map_err(|e| StartError::Keys(e.to_string()));
    }
    let path = config.data_dir.join(KEY_FILE);
    if !matches!(config.store, StoreUrl::Sqlite(_)) {
        return Err(keys_required(&config.store, &path));
    }
    let encoded = match std::fs::read_to_string(&path) {
        Ok(text) => {
            check_key_file_mode(&path, config.allow_readable_key_file)?;
            text
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = crate::seal::generate_key();
            write_private(&path, &key)?;
            tracing::warn!(
                path = %path.display(),
                "no sealing key configured: generated one and saved it with mode 0600 (a shared \
                 store needs GRANTRY_KEYS given to every replica)"
            );
            key
        }
        Err(e) => {
            return Err(StartError::Keys(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let keys: Vec<&str> = encoded.lines().filter(|l| !l.trim().is_empty()).collect();
    KeyRing::from_encoded(&keys).map_err(|e| StartError::Keys(format!("{}: {e}", path.display())))
}

/// The refusal of a shared store without `--keys`, pointing at the key this data directory
/// already holds, if any (its grants may be sealed with it).
fn keys_required(store: &StoreUrl, key_file: &Path) -> StartError {
    let held = if key_file.exists() {
        format!(
            " {} holds the key this data directory sealed with before: if grants in this \
             store were sealed with it, put its contents first in GRANTRY_KEYS.",
            key_file.display()
        )
    } else {
        String::new()
    };
    StartError::Keys(format!(
        "--keys (GRANTRY_KEYS) is required with the shared store {store}: every replica needs \
         the same key ring, and a key generated in the data directory serves a single SQLite \
         replica. Run `grantry keys generate` and give its output to every replica and to \
         the operators' commands.{held}"
    ))
}

/// A key file others may read is refused, as SSH refuses such a private key: whoever reads
/// it can open every grant. `allow` turns the refusal into a warning.
fn check_key_file_mode(path: &Path, allow: bool) -> Result<(), StartError> {
    let mode = grantry_base::private_files::readable_by_others(path)
        .map_err(|e| StartError::Keys(format!("cannot read {}: {e}", path.display())))?;
    let Some(mode) = mode else {
        return Ok(());
    };
    if allow {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{mode:o}"),
            "the sealing key file is readable by group or others (--allow-readable-key-file)"
        );
        return Ok(());
    }
    Err(StartError::Keys(format!(
        "{} is readable by group or others (mode {mode:o}): whoever can read it can open every \
         grant. Run `chmod 600 {}` (or start with --allow-readable-key-file)",
        path.display(),
        path.display()
    )))
}

fn write_private(path: &Path, contents: &str) -> Result<(), StartError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| StartError::Keys(format!("cannot create {}: {e}", path.display())))?;
    writeln!(file, "{contents}")
        .map_err(|e| StartError::Keys(format!("cannot write {}: {e}", path.display())))
}
