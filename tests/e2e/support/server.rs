//! Starts the real `grantry` binary on a free loopback port with its own data directory, and
//! captures its log so tests can check what it never writes.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Server {
    child: Child,
    pub base: String,
    pub data_dir: tempfile::TempDir,
    log: Arc<Mutex<String>>,
    port: u16,
    args: Vec<String>,
    /// A shell command the process starts after (e.g. `ulimit -n 400`), if any.
    shell_prefix: Option<String>,
}

/// What grantry logs once it holds its port (`program::run`).
const LISTENING: &str = "grantry is listening";

/// A port for a grantry of a test: below the ephemeral range (see [`super::ports`]).
pub fn free_port() -> u16 {
    super::ports::stable_port()
}

/// The key ring of a test's grantry on a shared store that names none (a shared store needs
/// one given): one key for the whole test run, so that replicas agree.
fn shared_store_keys() -> &'static str {
    static KEYS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let key = grantry::seal::generate_key();
        super::leaks::record("sealing key", [key.as_str()]);
        key
    })
}

/// Whether `args` run grantry on PostgreSQL or Redis without naming its keys.
fn shared_store_without_keys(args: &[String]) -> bool {
    let store = args
        .iter()
        .position(|a| a == "--store")
        .and_then(|at| args.get(at + 1));
    let shared = store.is_some_and(|url| !url.starts_with("sqlite:"));
    shared && !args.iter().any(|a| a == "--keys")
}

/// `command` with what every test's grantry is given: the port, the data directory, `args`
/// (and the test run's keys, on a shared store whose keys they do not name), and the
/// secrets the test catalogs and endpoints name.
fn with_test_settings<'c>(
    command: &'c mut Command,
    port: u16,
    data_dir: &std::path::Path,
    args: &[String],
) -> &'c mut Command {
    if shared_store_without_keys(args) {
        command.arg("--keys").arg(shared_store_keys());
    }
    command
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("GRANTRY_KEYS")
        .env("GRANTRY_OIDC_CLIENT_SECRET", super::oidc::CLIENT_SECRET)
        .env("FAKE_SECRET", "fake-client-secret")
        // The webhook endpoints tests configure: `hooks` and `slow` (the receivers' secret)
        // and `forger` (a secret the receivers do not know).
        .env("GRANTRY_WEBHOOK_SECRET_HOOKS", super::webhooks::SECRET)
        .env(
            "GRANTRY_WEBHOOK_SECRET_FORGER",
            super::webhooks::WRONG_SECRET,
        )
        .env("GRANTRY_WEBHOOK_SECRET_SLOW", super::webhooks::SECRET)
        // For catalog entries that point at grantry's own demo provider.
        .env("DEMO_SECRET", grantry::demo::DEMO_CLIENT_SECRET)
}

/// Spawns grantry on `port` and waits for `/healthz`; `None` if it did not come up.
async fn spawn(
    port: u16,
    data_dir: &std::path::Path,
    args: &[String],
    shell_prefix: Option<&str>,
) -> Option<(Child, Arc<Mutex<String>>)> {
    let base = format!("http://127.0.0.1:{port}");
    if let Some(at) = args.iter().position(|a| a == "--keys") {
        let keys = args.get(at + 1).map(String::as_str).unwrap_or_default();
        super::leaks::record("sealing key", keys.split(','));
    }
    let mut command_line = command(shell_prefix);
    let mut child = with_test_settings(&mut command_line, port, data_dir, args)
        // Everything at trace: the leak search (support::leaks) reads what the most verbose
        // operator setting would write.
        .env("GRANTRY_LOG", "trace")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("grantry binary starts");
    let log = Arc::new(Mutex::new(String::new()));
    let stderr = child.stderr.take().unwrap();
    let sink = log.clone();
    std::thread::spawn(move || {
        // Bytes, not `lines()`: one line that is not UTF-8 must not stop the reading (a pipe
        // nobody drains would block grantry's logging).
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&line));
            line.clear();
        }
    });
    let client = reqwest::Client::new();
    for _ in 0..100 {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        // The port was free when picked, but another test's grantry may have taken it since:
        // only a health check after our child says it listens is our child's answer.
        let listening = log.lock().unwrap().contains(LISTENING);
        let up = client.get(format!("{base}/healthz")).send().await;
        if listening && up.is_ok_and(|r| r.status().is_success()) {
            return Some((child, log));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    eprintln!(
        "grantry did not start on port {port}; log:\n{}",
        log.lock().unwrap()
    );
    None
}

/// Runs grantry with `args` (and a fresh data directory, unless they name one) expecting it
/// to refuse to start: its output once it exits.
pub fn refusal(args: &[&str]) -> std::process::Output {
    let data_dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_grantry"));
    command
        .arg("--listen")
        .arg(format!("127.0.0.1:{}", free_port()));
    if !args.contains(&"--data-dir") {
        command.arg("--data-dir").arg(data_dir.path());
    }
    let owned: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    if shared_store_without_keys(&owned) {
        command.arg("--keys").arg(shared_store_keys());
    }
    command
        .args(args)
        .env_remove("GRANTRY_KEYS")
        .env("FAKE_SECRET", "fake-client-secret");
    exit_of(&mut command)
}

/// Runs a grantry command that must end by itself (a refusal, `migrate`, `keys`): its output.
/// One still running after 20 s is killed and fails the test, rather than hanging it.
pub fn exit_of(command: &mut Command) -> std::process::Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("grantry binary starts");
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "grantry still running after 20 s: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The grantry binary, started by a shell after `prefix` when one is given.
fn command(prefix: Option<&str>) -> Command {
    let binary = env!("CARGO_BIN_EXE_grantry");
    match prefix {
        None => Command::new(binary),
        Some(prefix) => {
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg(format!("{prefix} && exec \"$0\" \"$@\""))
                .arg(binary);
            command
        }
    }
}

impl Server {
    /// Starts grantry with `args` added to the defaults (demo on, SQLite in a temp dir).
    pub async fn start(args: &[&str]) -> Server {
        Self::start_limited(None, args).await
    }

    /// Starts another replica of `first`'s deployment with `args` (the same store and keys,
    /// as the caller gives them): it serves `first`'s public URL, as replicas must.
    pub async fn start_beside(first: &Server, args: &[&str]) -> Server {
        let mut args = args.to_vec();
        args.extend(["--public-url", first.base.as_str()]);
        Self::start(&args).await
    }

    /// Starts grantry from a shell, after `prefix` (e.g. `ulimit -n 400`, `umask 022`).
    pub async fn start_after(prefix: &str, args: &[&str]) -> Server {
        Self::start_limited(Some(prefix), args).await
    }

    async fn start_limited(shell_prefix: Option<&str>, args: &[&str]) -> Server {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        Self::start_shaped(shell_prefix, |_| args.clone()).await
    }

    /// Starts grantry with the arguments `args_for` gives for its base URL (a catalog or a
    /// public URL that names grantry's own port): on a new port, and arguments, at each try.
    pub async fn start_naming_itself(args_for: impl Fn(&str) -> Vec<String>) -> Server {
        Self::start_shaped(None, args_for).await
    }

    async fn start_shaped(
        shell_prefix: Option<&str>,
        args_for: impl Fn(&str) -> Vec<String>,
    ) -> Server {
        install_tls_provider();
        let data_dir = tempfile::tempdir().unwrap();
        for _attempt in 0..5 {
            let port = free_port();
            let args = args_for(&format!("http://127.0.0.1:{port}"));
            if let Some((child, log)) = spawn(port, data_dir.path(), &args, shell_prefix).await {
                return Server {
                    child,
                    base: format!("http://127.0.0.1:{port}"),
                    data_dir,
                    log,
                    port,
                    args,
                    shell_prefix: shell_prefix.map(str::to_owned),
                };
            }
        }
        panic!("grantry did not start");
    }

    /// Kills the process at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Kills the process (SIGKILL) and starts a new one on the same port, data directory and
    /// arguments: what a crash and a restart look like.
    pub async fn restart(mut self) -> Server {
        self.kill();
        let args = self.args.clone();
        self.restart_as(args).await
    }

    /// Stops the process (SIGTERM, as an operator would: it leaves the other replicas) and
    /// starts it again with `more` arguments after the first ones: a setting changed.
    pub async fn restart_adding(mut self, more: &[&str]) -> Server {
        let mut args = self.args.clone();
        args.extend(more.iter().map(|a| a.to_string()));
        self.stop();
        self.restart_as(args).await
    }

    /// As [`Self::restart_adding`], with `args` in place of the first ones.
    pub async fn restart_with(mut self, args: &[&str]) -> Server {
        self.stop();
        self.restart_as(args.iter().map(|a| a.to_string()).collect())
            .await
    }

    /// Stops the process as an operator would, if it still runs.
    fn stop(&mut self) {
        if self.child.try_wait().unwrap().is_none() {
            self.terminate();
        }
    }

    async fn restart_as(mut self, args: Vec<String>) -> Server {
        self.args = args;
        super::leaks::keep_log(self.port, &self.log());
        let (child, log) = spawn(
            self.port,
            self.data_dir.path(),
            &self.args,
            self.shell_prefix.as_deref(),
        )
        .await
        .expect("grantry restarts");
        self.child = child;
        self.log = log;
        self
    }

    /// An operator's command (`connections list`, `users forget --yes`, …) run with this
    /// server's settings and store, with standard input closed and the default log filter
    /// (what an operator sees): its output once it exits. It is waited for off the test's
    /// runtime, which keeps serving the fakes it may call.
    pub async fn operator(&self, command: &[&str]) -> std::process::Output {
        let mut operator = self.operator_command(command);
        tokio::task::spawn_blocking(move || exit_of(&mut operator))
            .await
            .unwrap()
    }

    /// The command [`Server::operator`] runs, for a test that wires its output itself.
    pub fn operator_command(&self, command: &[&str]) -> Command {
        let mut operator = Command::new(env!("CARGO_BIN_EXE_grantry"));
        operator
            .args(command)
            .stdin(Stdio::null())
            .env_remove("GRANTRY_LOG")
            .env_remove("RUST_LOG");
        with_test_settings(&mut operator, self.port, self.data_dir.path(), &self.args);
        operator
    }

    /// The arguments it was started with.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Waits (up to 5 s) until the log contains `text`; the log is read on another thread.
    pub async fn log_shows(&self, text: &str) -> bool {
        for _ in 0..100 {
            if self.log().contains(text) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// The log once it has stopped growing for a moment: for checks that something is absent.
    pub async fn settled_log(&self) -> String {
        let mut last = self.log();
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = self.log();
            if now.len() == last.len() {
                return now;
            }
            last = now;
        }
    }

    /// Everything grantry logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// `GET /metrics`, as Prometheus scrapes it (the content type is checked).
    pub async fn metrics(&self) -> String {
        let response = reqwest::get(format!("{}/metrics", self.base))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let content_type = response.headers()["content-type"].to_str().unwrap();
        assert!(
            content_type.starts_with("text/plain; version=0.0.4"),
            "{content_type}"
        );
        response.text().await.unwrap()
    }

    /// The value of an unlabelled metric (a gauge or counter), if `/metrics` shows it.
    pub async fn metric(&self, name: &str) -> Option<f64> {
        let text = self.metrics().await;
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }

    /// The value of the series of `name` carrying every one of `labels` (summed over the
    /// series that match; 0 when none does, as for a counter never incremented).
    pub async fn counter(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let text = self.metrics().await;
        text.lines()
            .filter_map(|line| {
                let rest = line.strip_prefix(name)?.strip_prefix('{')?;
                let (series, value) = rest.split_once("} ")?;
                let wanted = labels
                    .iter()
                    .all(|(k, v)| series.split(',').any(|pair| pair == format!("{k}=\"{v}\"")));
                wanted.then(|| value.parse::<f64>().ok()).flatten()
            })
            .sum()
    }

    /// Waits (at most 10 s) until the counter `name` with `labels` reads `value`; fails the
    /// test with the metrics otherwise.
    pub async fn wait_for_counter(&self, name: &str, labels: &[(&str, &str)], value: f64) {
        for _ in 0..100 {
            if self.counter(name, labels).await == value {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!(
            "{name} {labels:?} never read {value}:\n{}",
            self.metrics().await
        );
    }

    /// Waits (at most 10 s) until this replica holds `count` retries open.
    pub async fn wait_until_holding(&self, count: u32) {
        for _ in 0..200 {
            if self.metric("grantry_held_retries").await == Some(f64::from(count)) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!(
            "{count} held retries never showed in /metrics:\n{}",
            self.metrics().await
        );
    }

    /// The demo provider's counters.
    pub async fn demo_stats(&self) -> serde_json::Value {
        reqwest::get(format!("{}/demo/stats", self.base))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Rows in a table of the SQLite store (read with the sqlite3 file directly).
    pub async fn count_rows(&self, table: &str) -> i64 {
        self.query_i64(&format!("SELECT COUNT(*) FROM {table}"))
            .await
    }

    /// The one number `sql` selects from the SQLite store (read from the file directly).
    pub async fn query_i64(&self, sql: &str) -> i64 {
        use sqlx::Connection;
        let url = format!(
            "sqlite://{}",
            self.data_dir.path().join("grantry.db").display()
        );
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
            .fetch_one(&mut conn)
            .await
            .unwrap()
    }

    /// Runs a statement against the SQLite store (to age a flow, say).
    pub async fn execute(&self, sql: &str) {
        use sqlx::Connection;
        let url = format!(
            "sqlite://{}",
            self.data_dir.path().join("grantry.db").display()
        );
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut conn)
            .await
            .unwrap();
    }
}

impl Server {
    /// Sends SIGTERM and waits for the process to exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            self.tell_what_went_wrong();
        }
        super::leaks::keep_log(self.port, &self.log());
        if let Ok(key) = std::fs::read_to_string(self.data_dir.path().join("sealing.key")) {
            super::leaks::record("sealing key", [key.trim()]);
        }
    }
}

impl Server {
    /// For a failing test: this grantry's warnings, errors and panics, and the connections it
    /// closed itself (a deadline) or saw end in an error, the last few (its whole trace-level
    /// log is kept for the leak search, not printed). A client that saw a connection close
    /// without an answer finds the server's side of it here.
    fn tell_what_went_wrong(&self) {
        let log = self.log();
        let worth: Vec<&str> = log
            .lines()
            .filter(|line| {
                line.contains(" WARN ")
                    || line.contains(" ERROR ")
                    || line.contains("panicked")
                    || line.contains("connection closed by its deadline")
                    || line.contains("connection ended with an error")
            })
            .collect();
        let shown = &worth[worth.len().saturating_sub(30)..];
        eprintln!(
            "grantry on port {} ({} warnings and errors, the last {} here):\n{}",
            self.port,
            worth.len(),
            shown.len(),
            shown.join("\n")
        );
    }
}

pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
