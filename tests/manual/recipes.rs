//! Every shell block of the manual that is not marked ([`super::blocks`]) runs here as
//! written, one at a time, each in a fresh folder: `bash -euo pipefail`, the environment
//! cleared but for `PATH`, `HOME` and the cache folder (`TMPDIR` is in the folder), `tests/`
//! and `deploy/` linked in so relative paths work as from a clone. On its `PATH`:
//!
//! - `grantry`: the binary under test. Serving (no command, or `serve`) starts it in the
//!   background and returns once `/readyz` answers, so a recipe that starts grantry in the
//!   foreground, as a person would, goes on. One that never gets ready ends the block at
//!   once, even when the recipe started it with `&` and waits for it in a loop.
//! - `cargo`: `cargo run --release [-- ARGS]` is that `grantry ARGS`; anything else fails.
//!
//! Whatever a block leaves running is ended with its process group. A block that needs what
//! this machine lacks (a program, a free port, PostgreSQL on 127.0.0.1:5432) fails under
//! `CI=true` and is skipped with a note elsewhere. A synopsis runs each line with its
//! placeholders filled in against an empty SQLite store that knows Xero: exit 0, or 3 where
//! the manual says a person with nothing stored exits 3.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::blocks::{Block, Marker, expected_rows, shell};
use super::commands::{command_lines, concrete, every_command, grantry_command, program};
use super::passwords::{password_makers, url_templates};
use super::root;

/// How long one block may take (a first install of the test OpenID provider included).
const DEADLINE: Duration = Duration::from_secs(300);

/// The `grantry` on a recipe's `PATH`.
const GRANTRY: &str = include_str!("wrappers/grantry");

/// The `cargo` on a recipe's `PATH`.
const CARGO: &str = include_str!("wrappers/cargo");

/// The providers file a synopsis runs with: Xero, as the manual's examples name it.
const PROVIDERS: &str =
    "[providers.xero]\nclient_id = \"x\"\nclient_secret_env = \"XERO_CLIENT_SECRET\"\n";

/// What became of one block.
enum Outcome {
    Ran,
    Skipped(String),
    Failed(String),
}

/// A fresh folder for one block, with the wrappers and a folder for logs.
struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("grantry-recipe-")
            .tempdir()
            .unwrap();
        for linked in ["tests", "deploy"] {
            std::os::unix::fs::symlink(root().join(linked), dir.path().join(linked)).unwrap();
        }
        let scene = Self { dir };
        std::fs::create_dir(scene.bin()).unwrap();
        std::fs::create_dir(scene.logs()).unwrap();
        std::fs::create_dir(scene.path().join(".tmp")).unwrap();
        let logs = scene.logs().display().to_string();
        let grantry = GRANTRY
            .replace("@REAL@", env!("CARGO_BIN_EXE_grantry"))
            .replace("@LOGS@", &logs);
        for (name, text) in [("grantry", grantry.as_str()), ("cargo", CARGO)] {
            let path = scene.bin().join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        scene
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn bin(&self) -> PathBuf {
        self.path().join(".bin")
    }

    fn logs(&self) -> PathBuf {
        self.path().join(".logs")
    }

    /// `program` in the folder, with the environment a recipe gets.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        let path = std::env::var("PATH").unwrap_or_default();
        command
            .env_clear()
            .env("PATH", format!("{}:{path}", self.bin().display()))
            .current_dir(self.path())
            .stdin(Stdio::null());
        // What a recipe makes with `mktemp` goes with the folder.
        command.env("TMPDIR", self.path().join(".tmp"));
        for kept in ["HOME", "GRANTRY_CACHE_DIR"] {
            if let Some(value) = std::env::var_os(kept) {
                command.env(kept, value);
            }
        }
        command
    }

    /// Why `block` cannot run on this machine, if it cannot.
    fn lacks(&self, block: &Block) -> Option<String> {
        let mut programs: Vec<String> = command_lines(&block.text)
            .iter()
            .flat_map(|line| every_command(line))
            .filter_map(|command| program(&command))
            .filter(|p| {
                p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
            })
            .collect();
        if block.text.contains("tests/oidc/install") {
            programs.push("npm".to_owned()); // it installs the provider with npm
        }
        for program in programs {
            let found = self
                .command("bash")
                .args(["-c", "command -v \"$1\"", "_", &program])
                .stdout(Stdio::null())
                .status()
                .unwrap();
            if !found.success() {
                return Some(format!("no `{program}` here"));
            }
        }
        for port in ports(&block.text) {
            if !free_within(port, Duration::from_secs(10)) {
                return Some(format!("127.0.0.1:{port} is taken"));
            }
        }
        if block.text.contains("psql") && !postgres(self, "SELECT 1") {
            return Some("no PostgreSQL on 127.0.0.1:5432 that lets `postgres` in".to_owned());
        }
        None
    }

    /// Runs a block's text as a script; what it printed and logged when it fails.
    fn script(&self, block: &Block) -> Result<(), String> {
        std::fs::write(self.path().join("recipe.sh"), &block.text).unwrap();
        let out = std::fs::File::create(self.logs().join("stdout")).unwrap();
        let err = std::fs::File::create(self.logs().join("stderr")).unwrap();
        let mut child = self
            .command("bash")
            .args(["-euo", "pipefail", "recipe.sh"])
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .unwrap();
        let ended = wait(&mut child, &self.logs().join("failed"));
        end_group(child.id());
        match ended {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(self.report(&format!("it ended with {status}"))),
            Err(why) => Err(self.report(&why)),
        }
    }

    /// Runs each line of a synopsis, filled in, against an empty store.
    fn synopsis(&self, block: &Block) -> Result<(), String> {
        std::fs::write(self.path().join("providers.toml"), PROVIDERS).unwrap();
        let grantry = |arguments: &[String]| {
            self.command(env!("CARGO_BIN_EXE_grantry"))
                .args(arguments)
                .env("GRANTRY_PROVIDERS", "providers.toml")
                .env("XERO_CLIENT_SECRET", "x")
                .output()
                .unwrap()
        };
        let made = grantry(&["migrate".to_owned()]);
        assert!(made.status.success(), "grantry migrate: {made:?}");
        for line in command_lines(&block.text) {
            let Some(arguments) = grantry_command(&line) else {
                return Err(format!("`{line}` is no grantry command"));
            };
            let arguments = concrete(&arguments);
            let ran = grantry(&arguments);
            let stderr = String::from_utf8_lossy(&ran.stderr);
            let nothing_stored =
                ran.status.code() == Some(3) && stderr.contains("nothing is stored");
            if !ran.status.success() && !nothing_stored {
                return Err(format!(
                    "`grantry {}`: {}: {stderr}",
                    arguments.join(" "),
                    ran.status
                ));
            }
        }
        Ok(())
    }

    /// What the block printed, and the end of every log it left.
    fn report(&self, what: &str) -> String {
        let mut report = format!("{what}\n");
        let mut logs: Vec<PathBuf> = std::fs::read_dir(self.logs())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        logs.sort();
        for log in logs {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(40)..].join("\n");
            let name = log.file_name().unwrap().to_string_lossy();
            report.push_str(&format!("--- {name}\n{tail}\n"));
        }
        report
    }

    /// Runs one block: skipped if this machine lacks what it needs.
    fn run(&self, block: &Block) -> Outcome {
        if let Some(why) = self.lacks(block) {
            return Outcome::Skipped(why);
        }
        let databases = Databases::of(&block.text);
        databases.drop(self);
        let result = match block.marker {
            Marker::Synopsis => self.synopsis(block),
            _ => self.script(block),
        };
        databases.drop(self);
        if let Ok(busy) = std::fs::read_to_string(self.logs().join("busy")) {
            return Outcome::Skipped(format!("{} is taken", busy.trim()));
        }
        match result {
            Ok(()) => Outcome::Ran,
            Err(report) => Outcome::Failed(format!("{}: {report}", block.place())),
        }
    }
}

/// The loopback ports a block names (`127.0.0.1:8080`), but for a server it signs in to
/// (`postgres://user:password@127.0.0.1:5432/…`): those it will listen on or reach its own
/// servers at.
fn ports(text: &str) -> Vec<u16> {
    let mut found: Vec<u16> = text
        .split("127.0.0.1:")
        .scan("", |before, rest| {
            Some((std::mem::replace(before, rest), rest))
        })
        .skip(1)
        .filter(|(before, _)| !before.ends_with('@'))
        .filter_map(|(_, rest)| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// Whether the port can be listened on within `wait` (a block before may still be ending).
fn free_within(port: u16, wait: Duration) -> bool {
    let started = Instant::now();
    loop {
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return true;
        }
        if started.elapsed() > wait {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs SQL as `postgres` on 127.0.0.1:5432; whether it succeeded.
fn postgres(scene: &Scene, sql: &str) -> bool {
    scene
        .command("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-q", "-c", sql])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The roles and databases a block creates in PostgreSQL, dropped before it runs and after.
struct Databases {
    roles: Vec<String>,
    databases: Vec<String>,
}

impl Databases {
    fn of(text: &str) -> Self {
        let named = |what: &str| -> Vec<String> {
            text.split(what)
                .skip(1)
                .map(|rest| {
                    rest.chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect()
                })
                .collect()
        };
        Self {
            roles: named("CREATE ROLE "),
            databases: named("CREATE DATABASE "),
        }
    }

    fn drop(&self, scene: &Scene) {
        for database in &self.databases {
            let sql = format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)");
            assert!(postgres(scene, &sql), "{sql}");
        }
        for role in &self.roles {
            let sql = format!("DROP ROLE IF EXISTS {role}");
            assert!(postgres(scene, &sql), "{sql}");
        }
    }
}

/// The child's status once it exits; why not, once a grantry it started has failed to get
/// ready (the wrapper wrote `failed`) or past [`DEADLINE`].
fn wait(child: &mut std::process::Child, failed: &Path) -> Result<ExitStatus, String> {
    let started = Instant::now();
    while started.elapsed() < DEADLINE {
        if let Some(status) = child.try_wait().unwrap() {
            return Ok(status);
        }
        if let Ok(why) = std::fs::read_to_string(failed) {
            return Err(why);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("it still ran after {DEADLINE:?}"))
}

/// Whether a process of the group is still running (a zombie no longer counts).
fn group_running(group: u32) -> bool {
    let group = group.to_string();
    std::fs::read_dir("/proc").unwrap().any(|entry| {
        let stat = std::fs::read_to_string(entry.unwrap().path().join("stat")).unwrap_or_default();
        // `pid (name) state ppid pgrp …`: the name may hold spaces and parentheses.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
        fields.len() > 2 && fields[0] != "Z" && fields[2] == group
    })
}

/// Ends what a block left running: its whole process group, politely first.
fn end_group(group: u32) {
    for signal in ["-TERM", "-KILL"] {
        let target = format!("-{group}");
        let _ = Command::new("kill")
            .args([signal, "--", &target])
            .stderr(Stdio::null())
            .status();
        let started = Instant::now();
        while group_running(group) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(100));
        }
        if !group_running(group) {
            return;
        }
    }
}

/// Written straight to stderr, past the test harness's capture, so every run shows it.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[test]
fn every_shell_block_of_the_manual_runs_as_written() {
    let under_ci = std::env::var("CI").as_deref() == Ok("true");
    let (mut ran, mut skipped, mut failed) = (0, 0, Vec::new());
    for block in shell().iter().filter(|b| b.runs()) {
        let started = Instant::now();
        match Scene::new().run(block) {
            Outcome::Ran => ran += 1,
            Outcome::Skipped(why) if under_ci => {
                failed.push(format!(
                    "{}: cannot run under CI=true: {why}",
                    block.place()
                ));
            }
            Outcome::Skipped(why) => {
                say(&format!("note: {} skipped: {why}", block.place()));
                skipped += 1;
            }
            Outcome::Failed(report) => failed.push(report),
        }
        let seconds = started.elapsed().as_secs_f32();
        say(&format!("manual: {} in {seconds:.1} s", block.place()));
    }
    let rows: Vec<String> = expected_rows()
        .iter()
        .map(|(label, count)| format!("{label}: {count}"))
        .collect();
    say(&format!(
        "manual: {ran} blocks ran, {skipped} skipped, {} failed; {}",
        failed.len(),
        rows.join("; ")
    ));
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn recipes_are_read_as_written() {
    let text = "export A_PASSWORD=\"$(x $(y))\" K=$(k)\nx=\"postgres://u:$A_PASSWORD@h:5432/d\"\n";
    assert_eq!(
        password_makers(text),
        [("A_PASSWORD".to_owned(), "x $(y)".to_owned())]
    );
    assert_eq!(
        url_templates(text, "A_PASSWORD"),
        ["postgres://u:\u{1}@h:5432/d"]
    );
    let compose = "STORE: postgres://g:${A_PASSWORD:?set A_PASSWORD}@pg:5432/g\n";
    assert_eq!(
        url_templates(compose, "A_PASSWORD"),
        ["postgres://g:\u{1}@pg:5432/g"]
    );
    assert_eq!(
        ports(
            "curl http://127.0.0.1:8080/readyz --listen 127.0.0.1:8081 127.0.0.1:8080 p://u:p@127.0.0.1:5432/d"
        ),
        [8080, 8081]
    );
    let databases = Databases::of("psql -c \"CREATE ROLE a_b LOGIN\" -c \"CREATE DATABASE c\"");
    assert_eq!(
        (databases.roles, databases.databases),
        (vec!["a_b".into()], vec!["c".into()])
    );
}
