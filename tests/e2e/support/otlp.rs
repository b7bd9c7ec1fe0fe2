//! A real OTLP/HTTP receiver for the tests: tests/otlp/receiver.py, which decodes every export
//! with the official `opentelemetry-proto` bindings (PyPI, pinned) and answers the spans it
//! got as JSON.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The receiver's python (its virtualenv), installed once per test binary.
fn python() -> &'static PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let install = Command::new(repo().join("tests/otlp/install"))
            .stderr(Stdio::inherit())
            .output()
            .expect("tests/otlp/install runs");
        assert!(install.status.success(), "tests/otlp/install failed");
        PathBuf::from(String::from_utf8(install.stdout).unwrap().trim())
    })
}

pub struct Collector {
    child: Child,
    /// The base URL grantry's `--otlp-endpoint` names.
    pub url: String,
}

impl Collector {
    pub fn start() -> Collector {
        let mut child = Command::new(python())
            .arg(repo().join("tests/otlp/receiver.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the OTLP receiver starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: Value = serde_json::from_str(&line).expect("the receiver prints its URL");
        let url = ready["url"].as_str().unwrap().to_owned();
        Collector { child, url }
    }

    /// Every span received so far.
    pub async fn spans(&self) -> Vec<Value> {
        reqwest::get(format!("{}/spans", self.url))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The spans received once `done` holds of them (within 20 s, else the test fails).
    pub async fn wait_until(&self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        for _ in 0..200 {
            let spans = self.spans().await;
            if done(&spans) {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("spans never arrived: {:#?}", self.spans().await);
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
