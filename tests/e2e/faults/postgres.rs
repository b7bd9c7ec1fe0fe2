//! PostgreSQL crashing right after a grant is shown as connected, and while it is down.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::answers_again;
use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server, servers};

/// A PostgreSQL cluster of the test's own (initdb in a temp dir, run as `postgres`), so it can
/// be stopped with `-m immediate` (a crash) without touching the shared server.
struct OwnPostgres {
    bin: std::path::PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

impl OwnPostgres {
    fn start() -> Option<OwnPostgres> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path().join("bin"))
            .find(|p| p.join("initdb").exists());
        let Some(bin) = bin else {
            servers::skip("PostgreSQL binaries", "no /usr/lib/postgresql/*/bin/initdb");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("chown")
            .arg("postgres")
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        let mut pg = OwnPostgres { bin, dir, port: 0 };
        pg.as_postgres(
            "initdb",
            &["-A", "trust", "-U", "postgres", "-D", &pg.data()],
        );
        // Below the ephemeral range, so that no one takes it while the server is down; and
        // on another one if another test's server took it first.
        for _ in 0..5 {
            pg.port = crate::support::ports::stable_port();
            if pg.start_on_port().is_ok() {
                return Some(pg);
            }
        }
        panic!("PostgreSQL did not start on any of five ports");
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn as_postgres(&self, program: &str, args: &[&str]) {
        if let Err(why) = self.try_as_postgres(program, args) {
            panic!("{why}");
        }
    }

    fn try_as_postgres(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let out = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join(program))
            .args(args)
            .output()
            .unwrap();
        if out.status.success() {
            return Ok(());
        }
        Err(format!(
            "{program}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }

    /// Starts (again) on its port; it must: a restart takes back the port it had.
    fn resume(&self) {
        if let Err(why) = self.start_on_port() {
            panic!("{why}");
        }
    }

    fn start_on_port(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        self.try_as_postgres(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-o",
                &options,
                "-l",
                &log,
                "-w",
                "start",
            ],
        )
    }

    /// `pg_ctl stop -m immediate`: the server dies without a checkpoint, as in a crash.
    fn crash(&self) {
        self.as_postgres("pg_ctl", &["-D", &self.data(), "-m", "immediate", "stop"]);
    }

    async fn grants(&self) -> i64 {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&self.url()).await.unwrap();
        sqlx::query_scalar("SELECT COUNT(*) FROM grants")
            .fetch_one(&mut conn)
            .await
            .unwrap()
    }

    async fn forget_grants(&self) {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&self.url()).await.unwrap();
        sqlx::query("DELETE FROM grants")
            .execute(&mut conn)
            .await
            .unwrap();
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
    }
}

#[tokio::test]
async fn a_grant_shown_as_connected_survives_a_postgres_crash() {
    let Some(pg) = OwnPostgres::start() else {
        return;
    };
    let server = Server::start(&["--store", &pg.url()]).await;
    let mcp = Mcp::new(server.mcp_url());
    for round in 0..5 {
        pg.forget_grants().await;
        let (link, _, _) = mcp.first_round().await;
        let done = Browser::new().sign_in(&link, true).await;
        done.assert_connected();
        // The page said "connected": crash the database at once.
        pg.crash();
        pg.resume();
        assert_eq!(
            pg.grants().await,
            1,
            "round {round}: the grant survived the crash"
        );
    }

    // While the database is down, a call fails fast with a retryable error.
    pg.crash();
    let started = Instant::now();
    let answer = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let outage = started.elapsed();
    eprintln!("a call against a dead PostgreSQL took {outage:?}");
    assert_eq!(answer.error_code(), -32603, "{}", answer.raw);
    assert_eq!(answer.body["error"]["data"]["retryable"], true);
    assert!(outage < Duration::from_secs(5), "{outage:?}");
    pg.resume();
    assert!(
        answers_again(&mcp).await.is_some(),
        "grantry recovered by itself"
    );
}
