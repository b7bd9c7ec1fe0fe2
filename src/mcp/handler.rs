//! The rmcp `ServerHandler`: protocol in, grantry's tools out.
//!
//! rmcp does the wire (JSON-RPC, `_meta`, the SEP-2243 headers, version checks, HTTP statuses);
//! this file maps methods to grantry: discovery, the tool list, and `tools/call` (form and
//! confirmation rounds, and the plain tools through [`super::plain_call`]). rmcp types are
//! built from JSON here, so the rest of grantry never sees them.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult,
    DiscoverResult, ErrorData, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::json;

use super::account_choice::{self, Before};
use super::answers::codes;
use super::answers::{from_json, tool_error};
use super::capabilities::Capabilities;
use super::confirm;
use super::extension::{Extension, Host};
use super::form;
use super::legacy;
use super::plain_call::{CallAnswer, LegacyAnswer, PlainCall, Retry};
use super::round_state;
use crate::identity::Principal;
use crate::state::AppState;
use crate::tools::{self, Call, Mode, ToolError};

/// How long clients may cache discovery and the tool list (they do not vary per user).
const LIST_TTL_MS: u64 = 5 * 60 * 1000;

/// Cloned for every request (rmcp serves each statelessly): everything behind `Arc`s.
#[derive(Clone)]
pub(crate) struct McpHandler {
    state: AppState,
    /// The same for every caller and request: built once, not per `tools/list` or call.
    tools: Arc<Vec<Tool>>,
    info: Arc<ServerConfig>,
    /// Bounds the legacy sessions' waits for a sign-in to land (see
    /// [`legacy::notify_when_connected`]).
    completion_notices: Arc<legacy::CompletionNotices>,
    /// Tools this build adds beside grantry's own (see [`super::extension`]).
    extension: Extension,
}

impl McpHandler {
    pub(crate) fn new(state: AppState, extension: Extension) -> Self {
        let own = tools::Tool::ALL
            .into_iter()
            .map(|tool| to_rmcp_tool(tool.spec()));
        // An extension's tools come first: the conformance suite probes headers by calling the
        // first listed tool with `{}` from a client without URL elicitation.
        let added = extension.iter().flat_map(|e| e.tools());
        let tools = added.chain(own).collect();
        let info = from_json(json!({
            "protocolVersion": "2026-07-28",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "grantry", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "Tools over the user's connected billing account. When an account is \
                not connected yet, the user is asked to open a sign-in link first.",
        }));
        let completion_notices = legacy::CompletionNotices::new(state.config.max_held_retries);
        Self {
            state,
            tools: Arc::new(tools),
            info: Arc::new(info),
            completion_notices,
            extension,
        }
    }

    /// The `server/discover` result: the same for every caller.
    pub(super) fn discovery(&self) -> DiscoverResult {
        let mut result = DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        )
        .with_ttl_ms(LIST_TTL_MS);
        result.cache_scope = CacheScope::Public;
        result
    }

    /// The `tools/list` result: the same for every caller.
    pub(super) fn tool_list(&self) -> ListToolsResult {
        ListToolsResult::with_all_items((*self.tools).clone())
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public)
    }
}

fn to_rmcp_tool(spec: tools::ToolSpec) -> Tool {
    from_json(json!({
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "outputSchema": spec.output_schema,
        "annotations": spec.annotations,
    }))
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(super::supported_versions().to_vec())
    }

    async fn discover(
        &self,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok(self.discovery())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.tool_list())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    /// rmcp reads a method it knows, sent with params of the wrong types, as an unknown one.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(
            super::malformed::invalid_params(&request.method, legacy::is_legacy(&ctx))
                .unwrap_or_else(|| ErrorData::new(codes::METHOD_NOT_FOUND, request.method, None)),
        )
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(extension) = &self.extension
            && extension.handles(&params.name)
        {
            return extension.call(params, ctx, Host::new(&self.state)).await;
        }
        let principal = authenticated(&ctx)?;
        let capabilities = Capabilities::of(&ctx);
        // The one lookup of the tool by its name on this path.
        let tool = tools::Tool::named(&params.name)
            .ok_or_else(|| tool_error(ToolError::UnknownTool(params.name.to_string())))?;
        let in_rounds = !matches!(tool.mode(), Mode::Plain);
        if in_rounds && legacy::is_legacy(&ctx) {
            // The same rounds, asked on the call's stream with `elicitation/create`.
            let round = |params: CallToolRequestParams| {
                let (principal, capabilities) = (&principal, capabilities);
                async move { self.rounds(principal, tool, &params, capabilities).await }
            };
            return legacy::drive_rounds(&self.state, &ctx, params.clone(), round).await;
        }
        if in_rounds {
            return self.rounds(&principal, tool, &params, capabilities).await;
        }
        let arguments = params.arguments.clone().unwrap_or_default();
        let call = PlainCall::new(&self.state, &principal, tool, &arguments);
        if legacy::is_legacy(&ctx) {
            return self.legacy_plain_call(&call, capabilities, &ctx).await;
        }
        let retry = Retry {
            request_state: params.request_state.as_deref(),
            responses: params
                .input_responses
                .as_ref()
                .map(|r| r.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        };
        // rmcp cancels `ct` when the client goes away: stop holding for nobody.
        tokio::select! {
            result = call.run(retry, capabilities) => result.map(CallAnswer::into_rmcp),
            _ = ctx.ct.cancelled() => Err(ErrorData::new(
                codes::INTERNAL_ERROR,
                "request cancelled",
                None,
            )),
        }
    }
}

/// The caller, as the auth layer in front of rmcp found them; without one nothing runs.
fn authenticated(ctx: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
    ctx.extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<Principal>().cloned())
        .ok_or_else(|| {
            ErrorData::new(
                codes::INTERNAL_ERROR,
                "request reached the tools without an authenticated principal",
                None,
            )
        })
}

impl McpHandler {
    /// One round of a tool with form or confirmation rounds.
    async fn rounds(
        &self,
        principal: &Principal,
        tool: tools::Tool,
        params: &CallToolRequestParams,
        capabilities: Capabilities,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = tool.name();
        let arguments = params.arguments.clone().unwrap_or_default();
        let client = Call {
            state: &self.state,
            principal,
            arguments: &arguments,
            chosen_account: None,
        };
        // Which account first, where that is open; then the tool's own rounds at it.
        let (chosen, fresh) =
            match account_choice::before_rounds(&client, params, capabilities).await? {
                Before::Answer(answer) => return Ok(answer),
                Before::Proceed { chosen, fresh } => (chosen, fresh),
            };
        let mut params = params.clone();
        if fresh {
            params.request_state = None;
            params.input_responses = None;
        }
        let with_account = chosen
            .as_deref()
            .map(|account| round_state::with_account(&arguments, account));
        let call = Call {
            arguments: with_account.as_ref().unwrap_or(&arguments),
            chosen_account: chosen.as_deref(),
            ..client
        };
        let params = &params;
        match tool.mode() {
            Mode::Form(form) => form::run(&call, name, form, params, capabilities).await,
            Mode::Confirm(confirm) => {
                confirm::run(&call, name, confirm, params, capabilities).await
            }
            Mode::Plain => Err(tool_error(ToolError::UnknownTool(name.to_owned()))),
        }
    }

    /// A plain tool in a legacy-era session: a missing connection is `-32042`, and the
    /// session hears `notifications/elicitation/complete` once the sign-in lands.
    async fn legacy_plain_call(
        &self,
        call: &PlainCall<'_>,
        capabilities: Capabilities,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match call.run_legacy(capabilities).await? {
            LegacyAnswer::Done(answer) => Ok(answer.into_rmcp()),
            LegacyAnswer::SignIn(elicitation) => {
                legacy::notify_when_connected(
                    self.state.clone(),
                    &self.completion_notices,
                    call.principal().clone(),
                    &elicitation,
                    ctx.peer.clone(),
                );
                Err(legacy::url_elicitation_required(&elicitation))
            }
        }
    }
}

/// Keeps the handler cheap to hand to rmcp's per-request factory.
pub(super) fn factory(
    handler: McpHandler,
) -> impl Fn() -> Result<McpHandler, std::io::Error> + Send + Sync + 'static {
    move || Ok(handler.clone())
}
