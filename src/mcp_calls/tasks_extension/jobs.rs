//! An extension's work run as a task ([`Tasks::run`]): written `working`, run on this replica
//! for at most the task's time to live, its answer written by compare-and-set (so a cancel
//! that came first wins), and stopped at once by a cancel this replica serves.

use std::collections::HashMap;
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::task::{AbortHandle, JoinHandle};

use crate::identity::Principal;
use crate::mcp_calls::extension::Job;
use crate::mcp_calls::results::CallAnswer;
use crate::mcp_calls::tasks_extension::work::Work;
use crate::mcp_calls::tasks_extension::{
    Candidate, Change, MAX_LIVE_PER_PERSON, Tasks, checked_when_moved, wire,
};
use crate::mcp_wire::jsonrpc::RpcError;

impl Tasks {
    /// Runs `job` (an extension's work) as a task, `working` until this replica finishes it;
    /// `CreateTaskResult`, once the task is written.
    pub(crate) async fn run(
        self: &Arc<Self>,
        call: Candidate,
        job: Job,
    ) -> Result<Value, RpcError> {
        if self.at_cap(&call.principal).await? {
            return Err(RpcError::internal(format!(
                "You have {MAX_LIVE_PER_PERSON} tasks already: wait for some to end, then call \
                 again"
            ))
            .with_data(serde_json::json!({"retryable": true})));
        }
        let mut work = Work::new(
            call.tool.name(),
            call.arguments,
            call.client.as_ref(),
            call.capabilities,
        );
        let (id, task) = self.insert(call.principal.clone(), &mut work).await?;
        // No one could read its answer past the task's time to live: it stops there.
        let lifetime = Duration::from_millis(
            u64::try_from(task.expires_at_ms - task.created_at_ms).unwrap_or_default(),
        );
        let running = tokio::spawn(async move {
            tokio::time::timeout(lifetime, job)
                .await
                .unwrap_or_else(|_| {
                    Err(RpcError::internal(
                        "the tool ran past its task's time to live",
                    ))
                })
        });
        self.running_jobs()
            .insert(task.id_hash.clone(), running.abort_handle());
        let (tasks, id_hash) = (self.clone(), task.id_hash.clone());
        tokio::spawn(async move { tasks.finish(&call.principal, &id_hash, running).await });
        Ok(wire::created(&id, &task, &work))
    }

    /// Writes a job's answer into its task, unless the task ended meanwhile (cancelled).
    async fn finish(
        &self,
        owner: &Principal,
        id_hash: &str,
        running: JoinHandle<Result<CallAnswer, RpcError>>,
    ) {
        let ended = running.await;
        self.running_jobs().remove(id_hash);
        let answer = match ended {
            Ok(answer) => answer,
            // Stopped by a cancel, which the task already says.
            Err(stopped) if stopped.is_cancelled() => return,
            Err(_) => Err(RpcError::internal("the tool failed while it ran")),
        };
        let finish = Change::Finish(&answer);
        if let Err(e) = self
            .change(owner, id_hash, &finish, &checked_when_moved)
            .await
        {
            tracing::warn!(
                error = e.describe(),
                "a finished job's task could not be written"
            );
        }
    }

    pub(super) fn running_jobs(&self) -> MutexGuard<'_, HashMap<String, AbortHandle>> {
        self.running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
