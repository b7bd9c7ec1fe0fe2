//! What grantry keeps on disk is its user's alone, whatever the umask: the data directory
//! 0700, the SQLite store and its companions 0600, and a sealing key others may read is
//! refused at start, as SSH refuses such a private key.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::support::server::refusal;
use crate::support::{Browser, Mcp, Server};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

const STORE_FILES: [&str; 4] = [
    "grantry.db",
    "grantry.db-wal",
    "grantry.db-shm",
    "sealing.key",
];

#[tokio::test]
async fn under_the_usual_umask_the_store_and_its_companions_are_private() {
    let server = Server::start_after("umask 022", &[]).await;
    // A sign-in writes to the store, so its write-ahead log is in use.
    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    Browser::new().sign_in(&link, true).await;
    let dir = server.data_dir.path();
    for file in STORE_FILES {
        assert_eq!(mode(&dir.join(file)), 0o600, "{file}");
    }
    // A data directory grantry creates itself is 0700.
    let root = tempfile::tempdir().unwrap();
    let fresh = root.path().join("fresh");
    let migrated =
        crate::support::server::exit_of(Command::new(env!("CARGO_BIN_EXE_grantry")).args([
            "migrate",
            "--data-dir",
            fresh.to_str().unwrap(),
        ]));
    assert!(migrated.status.success(), "{migrated:?}");
    assert_eq!(mode(&fresh), 0o700);
    assert_eq!(mode(&fresh.join("grantry.db")), 0o600);
}

#[tokio::test]
async fn files_an_older_version_left_readable_are_made_private_at_start() {
    let mut server = Server::start(&[]).await;
    server.kill();
    let dir = server.data_dir.path().to_owned();
    set_mode(&dir, 0o755);
    for file in ["grantry.db", "grantry.db-wal", "grantry.db-shm"] {
        if dir.join(file).exists() {
            set_mode(&dir.join(file), 0o644);
        }
    }
    let server = server.restart().await;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("grantry.db")), 0o600);
    assert!(server.log_shows("made private to grantry's user").await);
}

#[tokio::test]
async fn a_sealing_key_others_may_read_is_refused_unless_allowed() {
    let mut server = Server::start(&["--allow-readable-key-file", "true"]).await;
    server.kill();
    let dir = server.data_dir.path().to_owned();
    set_mode(&dir.join("sealing.key"), 0o644);
    let out = refusal(&["--data-dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sealing.key") && err.contains("644"), "{err}");
    assert!(err.contains("chmod 600"), "{err}");
    assert_eq!(
        mode(&dir.join("sealing.key")),
        0o644,
        "the refusal changes nothing"
    );

    let allowed = server.restart().await;
    assert!(allowed.log_shows("readable by group or others").await);
}
