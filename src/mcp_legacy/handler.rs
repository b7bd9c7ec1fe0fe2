//! The rmcp `ServerHandler` of the legacy era (2025-11-25): a session's `initialize`, its tool
//! list, and its tool calls, each turned into the same [`ToolCall`] the modern edge builds and
//! run by [`Dispatch`]. rmcp's types are built here and nowhere else: once at start (the
//! server's description, its tools) and per call from grantry's own answer.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult,
    DiscoverResult, ErrorCode as RmcpCode, ErrorData, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

use crate::identity::{McpClient, Presence, Principal, VerifiedClient};
use crate::mcp_calls::apps::{CARD_URI, Resources};
use crate::mcp_calls::call::{Called, Era, ToolCall};
use crate::mcp_calls::dispatch::Dispatch;
use crate::mcp_calls::registry::Registry;
use crate::mcp_calls::results::CallAnswer;
use crate::mcp_calls::rounds::Retry;
use crate::mcp_legacy::notices::CompletionNotices;
use crate::mcp_legacy::session::LegacyCall;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::describe::{self, server_description};
use crate::mcp_wire::jsonrpc::RpcError;
use crate::mcp_wire::malformed;

/// Cloned for every request rmcp serves: everything behind `Arc`s.
#[derive(Clone)]
pub(crate) struct McpHandler {
    dispatch: Arc<Dispatch>,
    registry: Arc<Registry>,
    /// The same for every session: built once, not per `tools/list` or call.
    tools: Arc<Vec<Tool>>,
    info: Arc<ServerConfig>,
    discovery: Arc<DiscoverResult>,
    /// Bounds the sessions' waits for a sign-in to land.
    notices: Arc<CompletionNotices>,
    /// The connect card's resource, as rmcp's answers (built once).
    resources: Arc<LegacyResources>,
}

/// The resources' answers in rmcp's types.
struct LegacyResources {
    list: ListResourcesResult,
    card: ReadResourceResult,
}

impl McpHandler {
    pub(crate) fn new(
        dispatch: Arc<Dispatch>,
        registry: Arc<Registry>,
        resources: &Resources,
        max_held: usize,
    ) -> Self {
        let tools = registry
            .descriptions()
            .iter()
            .map(|description| rmcp_value(serde_json::json!(description)))
            .collect();
        Self {
            dispatch,
            registry,
            tools: Arc::new(tools),
            info: Arc::new(rmcp_value(server_description())),
            discovery: Arc::new(rmcp_value(describe::discovery())),
            notices: CompletionNotices::new(max_held),
            resources: Arc::new(LegacyResources {
                list: rmcp_value(serde_json::json!({"resources": resources.listed()})),
                card: rmcp_value(serde_json::json!({
                    "contents": resources.read(CARD_URI).expect("grantry serves its card")
                })),
            }),
        }
    }
}

/// An rmcp value built at start from grantry's own description of it (which a unit test
/// reads into rmcp's types, so this never fails in a build that passed its tests).
fn rmcp_value<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("grantry's server and tool descriptions are MCP values")
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // describe::SUPPORTED_VERSIONS, as rmcp names them.
        Cow::Owned(vec![
            ProtocolVersion::V_2026_07_28,
            ProtocolVersion::V_2025_11_25,
        ])
    }

    async fn discover(
        &self,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok((*self.discovery).clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone())
            .with_ttl_ms(describe::LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(self.resources.list.clone())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::default())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != CARD_URI {
            let unknown = RpcError::invalid_params(format!("Resource not found: {}", request.uri))
                .with_data(serde_json::json!({"uri": request.uri}));
            return Err(to_rmcp_error(unknown));
        }
        Ok(ReadResourceResponse::Complete(self.resources.card.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    /// rmcp reads a method it knows, sent with params of the wrong types, as an unknown one.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let error = malformed::invalid_params(&request.method, true).unwrap_or_else(|| {
            RpcError::new(
                crate::mcp_wire::jsonrpc::ErrorCode::METHOD_NOT_FOUND,
                request.method,
            )
        });
        Err(to_rmcp_error(error))
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let principal = authenticated(&ctx)?;
        // The one lookup of the tool by its name on this path.
        let Some(entry) = self.registry.find(&params.name) else {
            let unknown = RpcError::invalid_params(format!("Unknown tool: {}", params.name));
            return Err(to_rmcp_error(unknown));
        };
        let parts = ctx.extensions.get::<http::request::Parts>();
        let span = crate::mcp_wire::spans::legacy_call(parts, entry.listed.name());
        // Within the call's span, so that arguments refused on reading are its outcome too.
        let run = async move {
            let tool = Called::read(&entry.listed, params.arguments.unwrap_or_default())?;
            let call = ToolCall {
                principal,
                client: client(&ctx),
                tool,
                retry: Retry {
                    request_state: params.request_state,
                    responses: params.input_responses.map(|r| r.into_iter().collect()),
                    ..Retry::default()
                },
                capabilities: declared(&ctx).for_presence(presence(&ctx)),
                era: Era::Legacy(Box::new(LegacyCall::new(
                    ctx,
                    self.notices.clone(),
                    self.dispatch.state().clone(),
                ))),
            };
            self.dispatch.call(call).await
        };
        let answer = match span {
            Some(span) => crate::telemetry::context::in_request(span, run).await,
            None => run.await,
        };
        match answer {
            Ok(answer) => to_rmcp_answer(answer),
            Err(error) => Err(to_rmcp_error(error)),
        }
    }
}

/// What the session's `initialize` declared.
fn declared(ctx: &RequestContext<RoleServer>) -> Capabilities {
    ctx.client_capabilities()
        .and_then(|c| serde_json::to_string(&c).ok())
        .and_then(|text| Capabilities::read(&text))
        .unwrap_or_default()
}

/// The client the call came through: the one the token was issued to, else the name the
/// session's `initialize` declared.
fn client(ctx: &RequestContext<RoleServer>) -> Option<McpClient> {
    let verified = ctx
        .extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<VerifiedClient>());
    let declared = ctx
        .peer
        .peer_info()
        .and_then(|info| McpClient::declared(&info.client_info.name));
    McpClient::through(verified, declared)
}

/// Whether a person is behind the caller's token, as the auth layer found it.
fn presence(ctx: &RequestContext<RoleServer>) -> Presence {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<Presence>().copied())
        .unwrap_or_default()
}

/// The caller, as the auth layer in front of rmcp found them; without one nothing runs.
fn authenticated(ctx: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<Principal>().cloned())
        .ok_or_else(|| {
            to_rmcp_error(RpcError::internal(
                "request reached the tools without an authenticated principal",
            ))
        })
}

fn to_rmcp_error(error: RpcError) -> ErrorData {
    ErrorData::new(RmcpCode(error.code.0), error.message, error.data)
}

/// grantry's answer as rmcp's type; a value rmcp cannot read is an internal error.
fn to_rmcp_answer(answer: CallAnswer) -> Result<CallToolResponse, ErrorData> {
    let value = serde_json::to_value(&answer).map_err(internal)?;
    match answer {
        CallAnswer::Complete(_) => serde_json::from_value(value).map(CallToolResponse::Complete),
        CallAnswer::InputRequired(_) => {
            serde_json::from_value(value).map(CallToolResponse::InputRequired)
        }
    }
    .map_err(internal)
}

fn internal(e: serde_json::Error) -> ErrorData {
    tracing::error!(error = %e, "an answer did not fit rmcp's types");
    to_rmcp_error(RpcError::internal("Internal error"))
}

/// Keeps the handler cheap to hand to rmcp's per-request factory.
pub(crate) fn factory(
    handler: McpHandler,
) -> impl Fn() -> Result<McpHandler, std::io::Error> + Send + Sync + 'static {
    move || Ok(handler.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grantrys_descriptions_read_as_rmcps_types() {
        let registry = Registry::new(Vec::new());
        let flags = crate::config::ServeArgs::from_flags(["--data-dir", "/nonexistent"]).unwrap();
        let resources = Resources::new(&crate::config::Config::resolve(flags).unwrap());
        let _: ListResourcesResult =
            serde_json::from_value(serde_json::json!({"resources": resources.listed()})).unwrap();
        let _: ReadResourceResult = serde_json::from_value(
            serde_json::json!({"contents": resources.read(CARD_URI).unwrap()}),
        )
        .unwrap();
        for description in registry.descriptions() {
            let _: Tool = serde_json::from_value(serde_json::json!(description)).unwrap();
        }
        let _: ServerConfig = serde_json::from_value(server_description()).unwrap();
        let _: DiscoverResult = serde_json::from_value(describe::discovery()).unwrap();
    }
}
