//! grantry as an OAuth resource server in front of `/mcp`: rate limits, the bearer token on
//! every request, the spec's challenges (401, 403 `insufficient_scope`), and the Protected
//! Resource Metadata (RFC 9728) that tells clients where to get a token.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::access::Access;
use crate::config::ToolScopes;
use crate::identity::{BearerError, GrantedScopes, Identity};
use crate::limits::{Bucket, RetryAfter, client_address};
use crate::state::AppState;

/// The PRM path for the `/mcp` endpoint (RFC 9728 §3.1, path-inserted).
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
/// The root PRM path, for clients that look there.
pub(crate) const ROOT_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Admits an MCP request: address limit, authentication, principal limit. The principal and
/// whether a person is behind it go into the request's extensions for the handler; a refusal
/// is the answer to send.
pub(crate) async fn admit(state: &AppState, request: &mut Request) -> Result<(), Response> {
    let address = client_address(request, &state.config.limits.trusted_proxies);
    if let Err(retry) = state.limiter.admit_address(Bucket::McpAddress, address) {
        return Err(too_many_requests(retry));
    }
    let caller = match state.identity.mcp_caller(request.headers()).await {
        Ok(caller) => caller,
        Err(refusal) => {
            tracing::info!(reason = %refusal, "MCP request not authenticated");
            return Err(challenge(state, &refusal));
        }
    };
    let principal = &caller.principal;
    if let Err(retry) = state
        .limiter
        .admit(Bucket::McpPrincipal, &principal.limiter_id())
    {
        tracing::info!(principal = %principal.tag(), "MCP request over the principal's rate limit");
        return Err(too_many_requests(retry));
    }
    let extensions = request.extensions_mut();
    extensions.insert(caller.presence);
    if let Some(client) = caller.client {
        extensions.insert(client);
    }
    if let Some(scopes) = caller.scopes {
        extensions.insert(scopes);
    }
    extensions.insert(caller.principal);
    Ok(())
}

/// The scopes a tool call needs beyond those every request needs, by the tool's access
/// (`--oidc-read-scopes`, `--oidc-write-scopes`, `--oidc-manage-scopes`), checked once the
/// edge knows which tool is called.
pub(crate) struct ToolScopeCheck {
    every_request: Vec<String>,
    by_access: ToolScopes,
    metadata: String,
}

impl ToolScopeCheck {
    /// The check, where some tool needs scopes of its own (`oidc` identity only).
    pub(crate) fn new(state: &AppState) -> Option<Self> {
        let Identity::Oidc(oidc) = &state.identity else {
            return None;
        };
        let by_access = oidc.settings.tool_scopes.clone();
        by_access.all().next()?;
        Some(Self {
            every_request: oidc.settings.required_scopes.clone(),
            by_access,
            metadata: format!("{}{METADATA_PATH}", state.config.public_url),
        })
    }

    /// The 403 `insufficient_scope` for a call of a tool with `access` whose token lacks its
    /// scopes, naming every scope the call needs: the client steps up to them (the
    /// authorization spec's step-up) and calls again. `None`: the call may go on.
    pub(crate) fn refusal(&self, parts: &Parts, access: Access) -> Option<Response> {
        let needed = self.by_access.needed_for(access);
        let granted = parts.extensions.get::<GrantedScopes>();
        if granted.is_some_and(|granted| granted.include(needed)) {
            return None;
        }
        tracing::info!(
            ?access,
            "tool call refused: the token lacks the tool's scopes"
        );
        let scopes: Vec<&str> = self
            .every_request
            .iter()
            .chain(needed)
            .map(String::as_str)
            .collect();
        Some(insufficient_scope(&self.metadata, &scopes.join(" ")))
    }
}

/// 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`, naming `scope`.
fn insufficient_scope(metadata: &str, scope: &str) -> Response {
    let refusal = BearerError::InsufficientScope;
    let header = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata}\", \
         error_description=\"the token lacks a required scope\""
    );
    let mut response = (
        StatusCode::FORBIDDEN,
        Json(json!({ "error": describe(&refusal) })),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&header) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// The 401, 403 or 503 answer to a refused token.
fn challenge(state: &AppState, refusal: &BearerError) -> Response {
    let metadata = format!("{}{METADATA_PATH}", state.config.public_url);
    let scopes = match &state.identity {
        Identity::Oidc(oidc) => oidc.settings.required_scopes.join(" "),
        Identity::Dev => String::new(),
    };
    let scope = if scopes.is_empty() {
        String::new()
    } else {
        format!(", scope=\"{scopes}\"")
    };
    let (status, header) = match refusal {
        BearerError::Missing => (
            StatusCode::UNAUTHORIZED,
            format!("Bearer resource_metadata=\"{metadata}\"{scope}"),
        ),
        BearerError::Invalid(_) | BearerError::Expired => (
            StatusCode::UNAUTHORIZED,
            format!(
                "Bearer error=\"invalid_token\", error_description=\"{}\", \
                 resource_metadata=\"{metadata}\"{scope}",
                describe(refusal)
            ),
        ),
        BearerError::InsufficientScope => return insufficient_scope(&metadata, &scopes),
        BearerError::Unavailable => {
            let mut response = (
                StatusCode::SERVICE_UNAVAILABLE,
                "the identity provider could not be reached to check the token; retry shortly\n",
            )
                .into_response();
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("5"));
            return response;
        }
    };
    let mut response = (status, Json(json!({ "error": describe(refusal) }))).into_response();
    if let Ok(value) = HeaderValue::from_str(&header) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// A description safe for a header: grantry's own fixed wording, never token content.
fn describe(refusal: &BearerError) -> String {
    match refusal {
        BearerError::Missing => "missing bearer token".into(),
        other => other.to_string().replace('"', "'"),
    }
}

fn too_many_requests(retry: RetryAfter) -> Response {
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        format!("too many requests; retry after {} seconds\n", retry.0),
    )
        .into_response();
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(retry.0));
    response
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`: who issues tokens for grantry.
pub(crate) async fn protected_resource_metadata(State(state): State<AppState>) -> Response {
    let Identity::Oidc(oidc) = &state.identity else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut body = json!({
        "resource": oidc.audience,
        "authorization_servers": [oidc.metadata.issuer],
        "bearer_methods_supported": ["header"],
        "resource_name": "grantry",
    });
    let mut scopes: Vec<&String> = Vec::new();
    for scope in oidc
        .settings
        .required_scopes
        .iter()
        .chain(oidc.settings.tool_scopes.all())
    {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if !scopes.is_empty() {
        body["scopes_supported"] = json!(scopes);
    }
    // Browser-based MCP clients read this cross-origin; it is public by design.
    (
        [
            ("access-control-allow-origin", "*"),
            ("cache-control", "public, max-age=300"),
        ],
        Json(body),
    )
        .into_response()
}
