//! A task as the extension writes it: `CreateTaskResult` (`resultType: "task"`) for the
//! call that made it, `DetailedTask` in a `tasks/get` result (`resultType: "complete"`).

use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::mcp_calls::tasks_extension::work::{End, Work};
use crate::tasks::{StoredTask, TaskId, TaskStatus};

/// How often a client is asked to poll, in milliseconds.
pub(super) const POLL_INTERVAL_MS: i64 = 2_000;

/// The answer to the call that made the task.
pub(super) fn created(id: &TaskId, task: &StoredTask, work: &Work) -> Value {
    let mut fields = task_fields(id, task, work);
    fields.insert("resultType".into(), json!("task"));
    Value::Object(fields)
}

/// The answer to `tasks/get`: the task, with what its status carries.
pub(super) fn detailed(id: &TaskId, task: &StoredTask, work: &Work) -> Value {
    let mut fields = task_fields(id, task, work);
    fields.insert("resultType".into(), json!("complete"));
    match (&work.end, task.status) {
        (Some(End::Completed(result)), _) => {
            fields.insert("result".into(), result.clone());
        }
        (Some(End::Failed(error)), _) => {
            fields.insert("error".into(), error.clone());
        }
        (_, TaskStatus::InputRequired) => {
            fields.insert("inputRequests".into(), Value::Object(work.input_requests()));
        }
        _ => {}
    }
    Value::Object(fields)
}

/// An acknowledgement (`tasks/update`, `tasks/cancel`).
pub(super) fn acknowledged() -> Value {
    json!({"resultType": "complete"})
}

fn task_fields(id: &TaskId, task: &StoredTask, work: &Work) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("taskId".into(), json!(id.expose()));
    fields.insert("status".into(), json!(task.status.as_str()));
    if let Some(message) = work.status_message() {
        fields.insert("statusMessage".into(), json!(message));
    }
    fields.insert("createdAt".into(), json!(iso(task.created_at_ms)));
    fields.insert("lastUpdatedAt".into(), json!(iso(task.updated_at_ms)));
    fields.insert(
        "ttlMs".into(),
        json!(task.expires_at_ms - task.created_at_ms),
    );
    if !task.status.is_terminal() {
        fields.insert("pollIntervalMs".into(), json!(POLL_INTERVAL_MS));
    }
    fields
}

/// Unix milliseconds as ISO 8601 (RFC 3339, UTC).
fn iso(unix_ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(unix_ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc_3339_in_utc() {
        assert_eq!(iso(1_785_574_800_000), "2026-08-01T09:00:00Z");
        assert_eq!(iso(1_785_574_800_250), "2026-08-01T09:00:00.25Z");
    }
}
