//! The MCP conformance suite's `test_*` tools (offered only with `--conformance-tools`).

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData, Tool};
use rmcp::service::RequestContext;

pub fn tools() -> Vec<Tool> {
    Vec::new()
}

pub fn is_test_tool(_name: &str) -> bool {
    false
}

pub async fn call(
    params: CallToolRequestParams,
    _ctx: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    Err(ErrorData::invalid_params(format!("Unknown tool: {}", params.name), None))
}
