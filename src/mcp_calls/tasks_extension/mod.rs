//! The Tasks extension (`io.modelcontextprotocol/tasks`) on `/mcp`, 2026-07-28 era: a call
//! whose answer would be a round (a sign-in link, a form) becomes a durable task its client
//! polls, for a client that declared the extension on that very call. Everyone else keeps
//! the rounds as they were.
//!
//! A task runs its call's rounds itself. It keeps the round's `requestState` and the client's
//! answers, sealed, in the store ([`crate::tasks`]), and each step is the retry the client
//! would have sent, made without holding ([`Patience::Look`](crate::mcp_calls::rounds::Patience)).
//! A sign-in round steps at each `tasks/get` (has the grant landed?) and as soon as a sign-in
//! of its person ends on the replica that saw the callback; a form round once `tasks/update`
//! answered all it asks. Each round's keys are the call's own with the round's
//! number ([`work`]), so a key is never asked twice. Any replica serves any step: every change
//! is a compare-and-set on the task's version, and a step that loses reads the winner's.
//!
//! A task answers its maker alone: another principal's `tasks/*` gets the same `-32602` as an
//! unknown id, and the store keeps only the hash of the id.

mod jobs;
mod sign_ins;
mod wire;
mod work;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio::task::AbortHandle;

use crate::audit::Audit;
use crate::identity::{McpClient, Principal};
use crate::mcp_calls::call::{Called, Era, ToolCall};
use crate::mcp_calls::dispatch::Dispatch;
use crate::mcp_calls::registry::Listed;
use crate::mcp_calls::results::{CallAnswer, InputRequired};
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::{ErrorCode, RpcError};
use crate::mcp_wire::notify::Notifier;
use crate::seal::Purpose;
use crate::state::AppState;
use crate::tasks::{StoredTask, TaskId, TaskStatus};
use crate::tools::ToolError;
use grantry_base::clock::unix_now_millis;
use work::Work;

/// How many times a change is tried against others changing the same task.
const ATTEMPTS: usize = 3;

/// How many of a person's waiting tasks one ended sign-in steps at once; any others step
/// at their next poll.
const STEPPED_ON_SIGN_IN: usize = 16;

/// How many tasks one person may have alive at once, ended or not (each keeps up to
/// [`crate::seal::MAX_STORED_TASK_LEN`]); past it a round is answered as a round.
pub(crate) const MAX_LIVE_PER_PERSON: u64 = 100;

/// A `tasks/*` request, read by the edge.
pub(crate) struct TaskRequest {
    pub(crate) principal: Principal,
    pub(crate) task_id: String,
    pub(crate) method: TaskMethod,
}

/// Which of the extension's methods.
pub(crate) enum TaskMethod {
    Get,
    Update(Map<String, Value>),
    Cancel,
}

/// A call that may become a task: what its steps need of it, kept before it runs.
pub(crate) struct Candidate {
    principal: Principal,
    client: Option<McpClient>,
    tool: Listed,
    arguments: Map<String, Value>,
    capabilities: Capabilities,
}

impl Candidate {
    /// For a call of one of grantry's tools, in this era, from a client that declared the
    /// extension on it: its round becomes a task.
    pub(crate) fn of(call: &ToolCall) -> Option<Self> {
        let own = matches!(call.tool, Called::Own(_));
        (own && call.capabilities.tasks && matches!(call.era, Era::Modern(_)))
            .then(|| Self::new(call))
    }

    /// What a task keeps of `call`: for a round of grantry's tools ([`Candidate::of`]), or
    /// an extension's work run as a task (see [`Dispatch::background`]).
    pub(crate) fn new(call: &ToolCall) -> Self {
        Self {
            principal: call.principal.clone(),
            client: call.client.clone(),
            tool: call.tool.listed(),
            arguments: call.tool.wire_arguments(),
            capabilities: call.capabilities,
        }
    }
}

/// Why a `tasks/*` request got no JSON-RPC answer of its own.
pub(crate) enum Refused {
    /// A JSON-RPC error (an unknown task, the store).
    Rpc(RpcError),
    /// The HTTP answer the edge's gate gave: the request's token may not run the task's tool.
    Gate(axum::response::Response),
}

impl From<RpcError> for Refused {
    fn from(error: RpcError) -> Self {
        Self::Rpc(error)
    }
}

/// What the request at hand may run, asked of each task's tool before the task is stepped
/// or shown: `None` lets it go on, a response refuses it (the scopes' 403). A task runs its
/// call with the token of the request that moves it, as a `tools/call` would.
pub(crate) type Gate<'a> = &'a (dyn Fn(&Listed) -> Option<axum::response::Response> + Sync);

/// The gate of a step that no request makes (a job's end, a sign-in's end): the call goes on
/// with the authority of the request that made or last answered its task, checked then.
fn checked_when_moved(_: &Listed) -> Option<axum::response::Response> {
    None
}

impl Refused {
    /// What a log line may say of it.
    fn describe(&self) -> &str {
        match self {
            Refused::Rpc(error) => &error.message,
            Refused::Gate(_) => "the request may not run the task's tool",
        }
    }
}

/// What a call's round became.
pub(crate) enum Made {
    /// `CreateTaskResult`.
    Task(Value),
    /// The round itself, to answer as it is.
    Round(InputRequired),
}

/// What a change does to a task.
enum Change<'a> {
    /// `tasks/get`: a sign-in round looks whether it ended.
    Look,
    Answer(&'a Map<String, Value>),
    Cancel,
    /// A background job's answer.
    Finish(&'a Result<CallAnswer, RpcError>),
}

/// The tasks service, built once.
pub(crate) struct Tasks {
    state: AppState,
    dispatch: Arc<Dispatch>,
    /// The jobs running on this replica, by task: a cancel stops its own at once.
    running: Mutex<HashMap<String, AbortHandle>>,
}

impl Tasks {
    /// The service, following the sign-ins that end on this replica (when built inside a
    /// runtime, as a serving process is; a router built without one, as the fuzz targets
    /// build it, has its tasks step at their polls only).
    pub(crate) fn start(state: AppState, dispatch: Arc<Dispatch>) -> Arc<Self> {
        let tasks = Arc::new(Self {
            state,
            dispatch,
            running: Mutex::new(HashMap::new()),
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(Self::follow_sign_ins(
                Arc::downgrade(&tasks),
                tasks.state.sign_ins_ended.listen(),
            ));
        }
        tasks
    }

    /// Makes `call`'s round a task, written before its answer: `CreateTaskResult`. A person
    /// with [`MAX_LIVE_PER_PERSON`] tasks already gets the round as it is (the server alone
    /// decides whether a call becomes a task, and the client takes rounds too).
    pub(crate) async fn create(
        &self,
        call: Candidate,
        round: InputRequired,
    ) -> Result<Made, RpcError> {
        if self.at_cap(&call.principal).await? {
            return Ok(Made::Round(round));
        }
        let mut work = Work::new(
            call.tool.name(),
            call.arguments,
            call.client.as_ref(),
            call.capabilities,
        );
        work.ask(round);
        work.card = self.card_provider(&call.principal, &work);
        let (id, task) = self.insert(call.principal, &mut work).await?;
        Ok(Made::Task(wire::created(&id, &task, &work)))
    }

    /// Whether `principal` has as many tasks alive as a person may (then counted and
    /// logged). Two calls at once may both pass: the cap bounds storage, not to the task.
    async fn at_cap(&self, principal: &Principal) -> Result<bool, RpcError> {
        let tasks = &self.state.tasks;
        let live = tasks.live_count(principal, unix_now_millis());
        if live.await.map_err(store_failed)? < MAX_LIVE_PER_PERSON {
            return Ok(false);
        }
        tracing::info!(
            principal = %principal.tag(),
            "a person's tasks are at their cap: no task is made"
        );
        crate::metrics::task("over_cap", 1);
        Ok(true)
    }

    /// Writes a new task for `work`, before its client hears of it.
    async fn insert(
        &self,
        principal: Principal,
        work: &mut Work,
    ) -> Result<(TaskId, StoredTask), RpcError> {
        let id = TaskId::generate();
        let now = unix_now_millis();
        // As long as the sign-in link its first round hands out.
        let ttl_ms = self.state.config.request_state_ttl_secs * 1000;
        let id_hash = id.hash();
        let task = StoredTask {
            sealed: self.seal(&id_hash, work),
            id_hash,
            principal,
            status: work.status(),
            version: 1,
            created_at_ms: now,
            updated_at_ms: now,
            expires_at_ms: now + ttl_ms,
        };
        self.state.tasks.insert(&task).await.map_err(store_failed)?;
        recorded(&task, "task.created", "created");
        Ok((id, task))
    }

    /// The answer to a `tasks/*` request. `tasks/get` and `tasks/update` run (or show what
    /// ran) the task's call, so `gate` must let the request run its tool; a cancel runs
    /// nothing and needs only to be the task's owner's.
    pub(crate) async fn answer(
        &self,
        request: TaskRequest,
        gate: Gate<'_>,
    ) -> Result<Value, Refused> {
        let id = TaskId::parse(&request.task_id).map_err(|_| unknown())?;
        let (owner, id_hash) = (&request.principal, &id.hash());
        match &request.method {
            TaskMethod::Get => {
                let (task, work) = self.change(owner, id_hash, &Change::Look, gate).await?;
                Ok(wire::detailed(&id, &task, &work))
            }
            TaskMethod::Update(responses) => {
                self.change(owner, id_hash, &Change::Answer(responses), gate)
                    .await?;
                Ok(wire::acknowledged())
            }
            TaskMethod::Cancel => {
                // Stops the call; the owner may always do that.
                self.change(owner, id_hash, &Change::Cancel, &checked_when_moved)
                    .await?;
                if let Some(job) = self.running_jobs().remove(id_hash.as_str()) {
                    job.abort();
                }
                Ok(wire::acknowledged())
            }
        }
    }

    /// Applies `change` to the task and writes it, again from the stored one while another
    /// replica changes it first; the task as it then stands. Nothing changes, and nothing is
    /// shown, unless `gate` lets the request run the task's tool.
    async fn change(
        &self,
        owner: &Principal,
        id_hash: &str,
        change: &Change<'_>,
        gate: Gate<'_>,
    ) -> Result<(StoredTask, Work), Refused> {
        for _ in 0..ATTEMPTS {
            let (task, mut work) = self.find(owner, id_hash).await?;
            if let Some(refusal) = gate(&work.listed()) {
                return Err(Refused::Gate(refusal));
            }
            if task.status.is_terminal() {
                return Ok((task, work));
            }
            let before = work.clone();
            self.apply(owner, &mut work, change).await?;
            if work == before {
                return Ok((task, work));
            }
            let sealed = self.seal(&task.id_hash, &mut work);
            let next = StoredTask {
                status: work.status(),
                updated_at_ms: unix_now_millis().max(task.updated_at_ms),
                sealed,
                ..task.clone()
            };
            if self
                .state
                .tasks
                .replace(&next)
                .await
                .map_err(store_failed)?
            {
                ended(&task, &next);
                return Ok((
                    StoredTask {
                        version: task.version + 1,
                        ..next
                    },
                    work,
                ));
            }
        }
        Ok(self.find(owner, id_hash).await?)
    }

    async fn apply(
        &self,
        owner: &Principal,
        work: &mut Work,
        change: &Change<'_>,
    ) -> Result<(), RpcError> {
        match change {
            Change::Look if work.waits_on_sign_in() => self.step(owner, work).await,
            Change::Look => Ok(()),
            Change::Answer(responses) => {
                if work.answer(responses) && work.all_answered() {
                    self.step(owner, work).await?;
                }
                Ok(())
            }
            Change::Cancel => {
                work.cancel();
                Ok(())
            }
            Change::Finish(Ok(answer)) => {
                work.take(answer.clone());
                Ok(())
            }
            Change::Finish(Err(error)) => {
                work.fail(error);
                Ok(())
            }
        }
    }

    /// One step: the call retried with the round's state and answers. A failure that may
    /// pass (the store) leaves the task as it was, for a later step.
    async fn step(&self, owner: &Principal, work: &mut Work) -> Result<(), RpcError> {
        let tool = match Called::read(&work.listed(), work.arguments.clone()) {
            Ok(tool) => tool,
            Err(error) => {
                work.fail(&error.into());
                return Ok(());
            }
        };
        let call = ToolCall {
            principal: owner.clone(),
            client: work.client(),
            tool,
            retry: work.retry(),
            capabilities: work.capabilities,
            era: Era::Modern(Notifier::silent()),
        };
        match self.dispatch.call(call).await {
            Ok(answer) => {
                work.take(answer);
                if work.card.is_none() {
                    work.card = self.card_provider(owner, work);
                }
            }
            Err(error) if error.code == ErrorCode::INTERNAL_ERROR => return Err(error),
            Err(error) => work.fail(&error),
        }
        Ok(())
    }

    /// The task stored under `id_hash` of `owner`, opened; an unknown, expired or someone
    /// else's task is the same `-32602`.
    async fn find(&self, owner: &Principal, id_hash: &str) -> Result<(StoredTask, Work), RpcError> {
        let task = self
            .state
            .tasks
            .get(id_hash)
            .await
            .map_err(store_failed)?
            .filter(|task| task.principal == *owner && !task.is_expired(unix_now_millis()))
            .ok_or_else(unknown)?;
        let (sealer, binding) = (&self.state.sealer, task.id_hash.as_bytes());
        let plain = sealer
            .open_bytes(Purpose::StoredTask, binding, &task.sealed)
            .or_else(|_| sealer.open_bytes(Purpose::TaskWorkBoundToUrl, binding, &task.sealed))
            .map_err(|e| self.unopened(&task.sealed, e))?;
        let work = serde_json::from_slice(&plain)
            .map_err(|_| RpcError::internal("a stored task is not readable"))?;
        Ok((task, work))
    }

    /// Why a stored task did not open. Under a key another live replica holds, this
    /// replica's ring lacks it: named, as the store's would be (another replica may serve the
    /// retry). Under a key no replica holds (retired while the task lived), it never opens
    /// again: the task is gone. Else a damaged record.
    fn unopened(&self, sealed: &str, error: crate::seal::OpenError) -> RpcError {
        let Some(key_id) = crate::seal::Sealer::key_id_of(sealed)
            .filter(|_| error == crate::seal::OpenError::UnknownKey)
        else {
            return RpcError::internal("a stored task is not readable");
        };
        let held = self.state.membership.get();
        if held.is_some_and(|membership| membership.a_peer_holds(&key_id)) {
            let what = "a task".to_owned();
            return ToolError::Store(crate::store::StoreError::Unopenable { what, key_id }).into();
        }
        tracing::warn!(key_id, "a task sealed under a key no replica holds is gone");
        unknown()
    }

    /// `work` sealed to be kept. Work too large to open again (a tool's answer of megabytes)
    /// ends instead with a tool error that says so, and that is what is kept.
    fn seal(&self, id_hash: &str, work: &mut Work) -> String {
        let sealed = self.seal_as_is(id_hash, work);
        if sealed.len() <= Purpose::StoredTask.max_len() {
            return sealed;
        }
        tracing::warn!(
            tool = %work.tool,
            sealed_bytes = sealed.len(),
            "a task's answer is too large to keep; the task ends with a tool error"
        );
        work.too_large(sealed.len(), Purpose::StoredTask.max_len());
        self.seal_as_is(id_hash, work)
    }

    fn seal_as_is(&self, id_hash: &str, work: &Work) -> String {
        let plain = serde_json::to_vec(work).expect("a task's work serializes");
        self.state
            .sealer
            .seal_bytes(Purpose::StoredTask, id_hash.as_bytes(), &plain)
    }
}

/// The one answer for a task that is not the caller's to see.
fn unknown() -> RpcError {
    RpcError::invalid_params("Unknown task")
}

fn store_failed(error: crate::store::StoreError) -> RpcError {
    ToolError::Store(error).into()
}

/// Counts and audits a task's end, when `next` is one.
fn ended(before: &StoredTask, next: &StoredTask) {
    if before.status == next.status {
        return;
    }
    match next.status {
        TaskStatus::Completed => recorded(next, "task.completed", "completed"),
        TaskStatus::Failed => recorded(next, "task.failed", "failed"),
        TaskStatus::Cancelled => recorded(next, "task.cancelled", "cancelled"),
        TaskStatus::Working | TaskStatus::InputRequired => {}
    }
}

fn recorded(task: &StoredTask, event: &'static str, counted: &'static str) {
    crate::metrics::task(counted, 1);
    Audit {
        principal: Some(&task.principal),
        ..Default::default()
    }
    .notice(event, task.status.as_str());
}
