//! A real webhook receiver for the tests: tests/webhooks/receiver.mjs, which verifies every
//! delivery with the official Standard Webhooks library (npm `standardwebhooks`), dedupes by
//! webhook-id, and can be told to fail or to drop connections.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

/// The secret of the `hooks` endpoint (every test server has it in its environment).
pub const SECRET: &str = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/// The secret of the `forger` endpoint: one the receiver does not know.
pub const WRONG_SECRET: &str = "whsec_ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The verifier's install folder, installed once per test binary.
fn deps() -> &'static PathBuf {
    static DEPS: OnceLock<PathBuf> = OnceLock::new();
    DEPS.get_or_init(|| {
        let install = Command::new(repo().join("tests/webhooks/install"))
            .stderr(Stdio::inherit())
            .output()
            .expect("tests/webhooks/install runs");
        assert!(install.status.success(), "tests/webhooks/install failed");
        let deps = PathBuf::from(String::from_utf8(install.stdout).unwrap().trim());
        let link = repo().join("tests/webhooks/node_modules");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(deps.join("node_modules"), &link)
            .expect("node_modules link beside receiver.mjs");
        super::leaks::record("webhook secret", [SECRET, WRONG_SECRET]);
        deps
    })
}

pub struct Receiver {
    child: Child,
    /// Where grantry posts (`…/hook`).
    pub url: String,
    base: String,
}

impl Receiver {
    pub fn start() -> Receiver {
        super::server::install_tls_provider();
        deps();
        let mut child = Command::new("node")
            .arg(repo().join("tests/webhooks/receiver.mjs"))
            .env("RECEIVER_SECRET", SECRET)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs the receiver");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: Value = serde_json::from_str(&line).expect("the receiver prints its URL");
        let url = ready["url"].as_str().unwrap().to_owned();
        let base = url.trim_end_matches("/hook").to_owned();
        Receiver { child, url, base }
    }

    /// grantry's flags for endpoints `names` (`hooks`, `forger`) all posting here, retrying
    /// after `retries` (seconds, comma-separated).
    pub fn flags(&self, names: &[&str], retries: &str) -> Vec<String> {
        let targets: Vec<String> = names.iter().map(|n| format!("{n}={}", self.url)).collect();
        vec![
            "--webhook-url".into(),
            targets.join(","),
            "--webhook-retries".into(),
            retries.into(),
        ]
    }

    pub async fn state(&self) -> Value {
        reqwest::get(format!("{}/state", self.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Answers the next deliveries with `statuses` (after verifying them).
    pub async fn answer_first(&self, statuses: &[u16]) {
        self.script(json!({ "statuses": statuses })).await;
    }

    /// Keeps deliveries waiting, unanswered (`true`), or lets them through (`false`).
    pub async fn set_hold(&self, hold: bool) {
        self.script(json!({ "hold": hold })).await;
    }

    /// Waits (up to 10 s) until a delivery is held.
    pub async fn wait_until_holding(&self) {
        for _ in 0..100 {
            if self.state().await["held"].as_u64() > Some(0) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no delivery arrived to hold: {}", self.state().await);
    }

    /// Drops every connection unanswered (`true`) or serves again (`false`).
    pub async fn set_down(&self, down: bool) {
        self.script(json!({ "down": down })).await;
    }

    async fn script(&self, script: Value) {
        let sent = reqwest::Client::new()
            .post(format!("{}/script", self.base))
            .json(&script)
            .send()
            .await
            .unwrap();
        assert!(sent.status().is_success());
    }

    /// The events received (each once), once there are at least `count`, waiting up to
    /// `within`; fails the test with what did arrive otherwise.
    pub async fn wait_for(&self, count: usize, within: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let state = self.state().await;
            let received = state["received"].as_array().unwrap().clone();
            if received.len() >= count {
                return received;
            }
            if tokio::time::Instant::now() > deadline {
                panic!("{count} events never arrived; the receiver has {state}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
