//! The store deployments a failover run kills the primary of, each of the run's own (started
//! by tests/servers/redis-topologies and tests/servers/pg-failover), so killing it touches
//! no other test.

use std::path::PathBuf;
use std::process::Command;

use crate::support::servers;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A primary with two replicas, three sentinels.
    Sentinel,
    /// Three primaries, each with two replicas.
    Cluster,
    /// A primary and a synchronous standby behind HAProxy.
    Postgres,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Self::Sentinel => "Redis Sentinel",
            Self::Cluster => "Redis Cluster",
            Self::Postgres => "PostgreSQL + standby behind HAProxy",
        }
    }

    fn script(self) -> &'static str {
        match self {
            Self::Sentinel | Self::Cluster => "tests/servers/redis-topologies",
            Self::Postgres => "tests/servers/pg-failover",
        }
    }

    /// The words after `start DIR`.
    fn start_args(self) -> &'static [&'static str] {
        match self {
            Self::Sentinel => &["sentinel", "2"],
            Self::Cluster => &["cluster", "2"],
            Self::Postgres => &["sync"],
        }
    }

    /// The words after `fail DIR`.
    fn fail_args(self) -> &'static [&'static str] {
        match self {
            Self::Sentinel => &["sentinel"],
            Self::Cluster => &["cluster"],
            Self::Postgres => &[],
        }
    }

    /// The programs its script needs.
    fn needs(self) -> &'static [&'static str] {
        match self {
            Self::Sentinel | Self::Cluster => &["redis-server", "redis-cli"],
            Self::Postgres => &["haproxy", "runuser"],
        }
    }
}

pub struct Topology {
    shape: Shape,
    dir: tempfile::TempDir,
    /// The `--store` URL grantry is given.
    pub store: String,
}

fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Topology {
    /// Starts `shape`; `None` (the test says it skipped, or fails under CI) when this machine
    /// lacks what it needs.
    pub fn start(shape: Shape) -> Option<Topology> {
        if let Some(missing) = shape.needs().iter().find(|p| !have(p)) {
            servers::skip(shape.name(), format!("`{missing}` is not installed"));
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(repo_path(shape.script()))
            .arg("start")
            .arg(dir.path())
            .args(shape.start_args())
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        let store = printed
            .lines()
            .find_map(|line| line.split_once('=').map(|(_, url)| url.to_owned()));
        let topology = Topology {
            shape,
            dir,
            store: store.unwrap_or_default(),
        };
        assert!(
            out.status.success() && !topology.store.is_empty(),
            "{} did not start: {}",
            shape.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        Some(topology)
    }

    /// Kills the primary, as a crashed machine (the PostgreSQL script also promotes the
    /// standby, as a failover manager would).
    pub fn fail_primary(&self) {
        let out = Command::new(repo_path(self.shape.script()))
            .arg("fail")
            .arg(self.dir.path())
            .args(self.shape.fail_args())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "failing the {} primary: {}",
            self.shape.name(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let _ = Command::new(repo_path(self.shape.script()))
            .arg("stop")
            .arg(self.dir.path())
            .output();
    }
}
