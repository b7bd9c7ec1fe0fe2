//! MCP tasks (the `io.modelcontextprotocol/tasks` extension) as stored: a call that outlives
//! its request, written before the client hears of it, readable by any replica, bound to the
//! principal that made it.
//!
//! A task is kept under the hash of its id: the id is a bearer handle, handed only to the
//! client, so a store dump holds nothing a poll could use. What the task carries (the call,
//! the input it waits for, its result) is one sealed value the data layer never reads; its
//! state, owner and times are plain, for the indexes. Each change is a compare-and-set on the
//! task's version, so two replicas finishing one task cannot both win.

pub(crate) mod redis;
pub(crate) mod sql;

use std::fmt;

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::identity::Principal;
use crate::store::StoreError;

/// How long past its time to live a task's Redis keys outlive it, should no replica sweep:
/// they then expire on their own.
pub(crate) const EXPIRED_RETENTION_MS: i64 = 3_600_000;

/// A task's id as the client holds it: 256 random bits, base64url.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct TaskId(String);

/// An id that cannot be one grantry made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a task id grantry made")]
pub(crate) struct NotATaskId;

impl TaskId {
    const BYTES: usize = 32;

    /// A new id, from the operating system's random source.
    pub(crate) fn generate() -> Self {
        Self(URL_SAFE_NO_PAD.encode(rand::random::<[u8; Self::BYTES]>()))
    }

    /// A client's `taskId`, if it has the shape of one grantry made.
    pub(crate) fn parse(text: &str) -> Result<Self, NotATaskId> {
        match URL_SAFE_NO_PAD.decode(text) {
            Ok(bytes) if bytes.len() == Self::BYTES => Ok(Self(text.to_owned())),
            _ => Err(NotATaskId),
        }
    }

    /// The id, for the client that owns the task (never for a log line).
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// What the store keys the task by.
    pub(crate) fn hash(&self) -> String {
        crate::seal::digest("grantry/task/v1", &[self.0.as_bytes()])
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TaskId(…)")
    }
}

/// Where a task stands (the extension's `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TaskStatus {
    Working,
    /// Waiting for the client (a sign-in link opened, a form answered).
    InputRequired,
    Completed,
    /// A protocol-level failure; a tool's own error completes its task.
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub(crate) const ALL: [TaskStatus; 5] = [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    /// The wire name, also what the store holds.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    pub(crate) fn parse(text: &str) -> Result<Self, StoreError> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
            .ok_or_else(|| StoreError::Corrupt(format!("task status `{text}`")))
    }

    /// Whether the task can no longer change.
    pub(crate) fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// One task as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredTask {
    /// [`TaskId::hash`] of its id.
    pub id_hash: String,
    /// Who made it: the only principal it answers.
    pub principal: Principal,
    pub status: TaskStatus,
    /// 1 when written, one more at each change.
    pub version: i64,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// `created_at_ms` plus its time to live.
    pub expires_at_ms: i64,
    /// Everything else, sealed by the service that owns tasks.
    pub sealed: String,
}

impl StoredTask {
    /// Whether its time to live has passed at `now_ms`: a task its owner can no longer see.
    pub(crate) fn is_expired(&self, now_ms: i64) -> bool {
        self.expires_at_ms <= now_ms
    }
}

/// Storage for tasks; one implementation per backend.
#[async_trait]
pub(crate) trait TaskBackend: Send + Sync {
    /// Writes a new task (at version 1), durably: on Redis, acknowledged by the replicas asked
    /// for. A task already stored under the same hash is an error.
    async fn insert(&self, task: &StoredTask) -> Result<(), StoreError>;
    /// The task stored under `id_hash`, expired or not.
    async fn get(&self, id_hash: &str) -> Result<Option<StoredTask>, StoreError>;
    /// Writes `task` (status, times, sealed value; its version one more than `task.version`)
    /// if the stored one is still at `task.version`; tells whether it was.
    async fn replace(&self, task: &StoredTask) -> Result<bool, StoreError>;
    /// `principal`'s tasks not ended and alive at `now_ms`, at most `limit`, those made last
    /// first.
    async fn open_of(
        &self,
        principal: &Principal,
        now_ms: i64,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError>;
    /// How many of `principal`'s tasks are alive at `now_ms`, ended or not.
    async fn live_count(&self, principal: &Principal, now_ms: i64) -> Result<u64, StoreError>;
    /// Removes tasks whose time to live ended before `before_ms`; returns how many.
    async fn delete_expired(&self, before_ms: i64) -> Result<u64, StoreError>;
    /// Removes every task of `principal`; returns how many.
    async fn forget(&self, principal: &Principal) -> Result<u64, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_long_random_and_checked_on_the_way_in() {
        let (a, b) = (TaskId::generate(), TaskId::generate());
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 43, "32 bytes in base64url");
        assert_eq!(TaskId::parse(a.expose()), Ok(a.clone()));
        assert_ne!(a.hash(), a.expose(), "stored under a hash, not the id");
        for junk in ["", "abc", &a.expose()[1..], "!".repeat(43).as_str()] {
            assert_eq!(TaskId::parse(junk), Err(NotATaskId), "{junk:?}");
        }
        assert_eq!(format!("{a:?}"), "TaskId(…)", "never in a log line");
    }

    #[test]
    fn statuses_round_trip_and_know_their_end() {
        for status in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(status.as_str()).unwrap(), status);
        }
        assert!(TaskStatus::parse("done").is_err());
        let ended: Vec<_> = TaskStatus::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(
            ended,
            [
                TaskStatus::Completed,
                TaskStatus::Failed,
                TaskStatus::Cancelled
            ]
        );
    }
}
