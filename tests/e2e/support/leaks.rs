//! The suite-wide search for leaked secrets (security checklist 68).
//!
//! With `GRANTRY_LEAK_DIR` set (scripts/test sets it), every secret value a test meets (OAuth
//! codes and states, access tokens, cookie values, requestStates, sealed connect links) is
//! appended to `secrets.txt` there, and every grantry log (run at trace level) is written
//! beside it when its server stops. `tests/leak_scan` then searches every log for every
//! secret. Without the variable nothing is written.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;

static FILE_LOCK: Mutex<()> = Mutex::new(());

fn dir() -> Option<PathBuf> {
    std::env::var_os("GRANTRY_LEAK_DIR").map(PathBuf::from)
}

/// Remembers secret values (`kind` says what they are) for the final search.
pub fn record<'a>(kind: &str, values: impl IntoIterator<Item = &'a str>) {
    let Some(dir) = dir() else {
        return;
    };
    let _one_writer = FILE_LOCK.lock().unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("secrets.txt"))
        .unwrap();
    for value in values {
        // Short values could match by chance; every real secret here is far longer.
        if value.len() >= 12 && !value.contains(['\n', '\t']) {
            writeln!(file, "{kind}\t{value}").unwrap();
        }
    }
}

/// Keeps one grantry log for the final search.
pub fn keep_log(port: u16, log: &str) {
    let Some(dir) = dir() else {
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!("grantry-{port}-{:016x}.log", rand::random::<u64>());
    std::fs::write(dir.join(name), log).unwrap();
}
