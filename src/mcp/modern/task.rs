//! A 2026-07-28 `tasks/get`, `tasks/update` or `tasks/cancel` read into a
//! [`TaskRequest`]: only from a client that declares the Tasks extension on it (`-32021`
//! otherwise), with a `taskId` string and, for an update, its `inputResponses` object.

use serde_json::{Map, Value};

use crate::identity::Principal;
use crate::mcp::modern::Asked;
use crate::mcp::modern::envelope::Params;
use crate::mcp_calls::tasks_extension::{TaskMethod, TaskRequest};
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::describe::TASKS_EXTENSION;
use crate::mcp_wire::jsonrpc::RpcError;

pub(super) fn read(
    asked: &Asked<'_>,
    method: &str,
    params: &Params<'_>,
    capabilities: Capabilities,
) -> Result<TaskRequest, RpcError> {
    if !capabilities.tasks {
        return Err(RpcError::extension_required(method, TASKS_EXTENSION));
    }
    let Ok(Some(task_id)) = Params::read::<String>(params.task_id) else {
        return Err(RpcError::invalid_params(format!(
            "{method} needs a `taskId` string"
        )));
    };
    let method = match method {
        "tasks/get" => TaskMethod::Get,
        "tasks/cancel" => TaskMethod::Cancel,
        _ => match Params::read::<Map<String, Value>>(params.input_responses) {
            Ok(Some(responses)) => TaskMethod::Update(responses),
            _ => {
                return Err(RpcError::invalid_params(
                    "tasks/update needs an `inputResponses` object",
                ));
            }
        },
    };
    let Some(principal) = asked.parts.extensions.get::<Principal>().cloned() else {
        return Err(RpcError::internal(
            "request reached the tasks without an authenticated principal",
        ));
    };
    Ok(TaskRequest {
        principal,
        task_id,
        method,
    })
}
