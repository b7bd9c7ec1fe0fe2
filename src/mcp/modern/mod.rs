//! The 2026-07-28 era on `/mcp`, served by grantry itself: every request is read once, checked
//! in the order the transport gives (the origin and content types, the message, the version
//! header against `_meta`, the routing headers against the body, the version, the client's
//! capabilities), and becomes either an answer at once or one typed [`ToolCall`] for
//! [`crate::mcp_calls::dispatch`]. A request of the legacy era (an `initialize`, a session's) is
//! left to rmcp ([`Read::Legacy`]).
//!
//! Every refusal is worded and coded as rmcp 3.11 answered this era before grantry took it
//! over (`tests/e2e/recorded_wire.rs` holds its answers).
//!
//! Files: [`envelope`] (the JSON-RPC message), [`meta`] (`_meta`, remembered), [`headers`]
//! (transport and routing headers), [`origins`] (the browser origins allowed), [`versions`]
//! (the header's and `_meta`'s), [`call`] (a `tools/call` into the typed call), [`task`] (a
//! `tasks/*` request into the typed one).

mod call;
mod envelope;
mod headers;
mod meta;
mod origins;
mod task;
mod versions;

use std::borrow::Cow;
use std::sync::Arc;

use axum::body::Body;
use axum::http::header::{ALLOW, HOST};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::mcp_calls::apps::{CARD_URI, Resources};
use crate::mcp_calls::call::ToolCall;
use crate::mcp_calls::registry::Registry;
use crate::mcp_calls::tasks_extension::TaskRequest;
use crate::mcp_legacy as legacy;
use crate::mcp_wire::describe::{LIST_TTL_MS, MODERN_VERSION, checks_routing};
use crate::mcp_wire::headers::MCP_PROTOCOL_VERSION;
use crate::mcp_wire::jsonrpc::{self, ErrorCode, ReplyTo, RpcError};
use crate::mcp_wire::notify::Notifications;
use crate::server::hosts::AllowedHosts;
use call::CallParams;
use envelope::{Message, Params};
use headers::Routed;
use meta::{KnownMetas, Meta};
pub(crate) use origins::AllowedOrigins;

/// What [`Modern::read`] made of a request.
pub(crate) enum Read {
    /// A request of the legacy era: rmcp's.
    Legacy,
    /// Answered at once: a refusal, a notification's 202, discovery, the tool list.
    Answered(Response),
    /// A tool call, answered when it completes (it may hold while the person signs in).
    Call(Box<Call>),
    /// A `tasks/*` request, answered from the store.
    Task(Box<TaskRequest>, ReplyTo),
}

/// A tool call read, with whom it answers and the notifications it may send first.
pub(crate) struct Call {
    pub(crate) call: ToolCall,
    pub(crate) reply_to: ReplyTo,
    /// `None` for a call that sends none (grantry's own tools).
    pub(crate) notifications: Option<Notifications>,
}

/// Built once at start; shared by every request.
pub(crate) struct Modern {
    hosts: AllowedHosts,
    origins: AllowedOrigins,
    metas: KnownMetas,
    registry: Arc<Registry>,
    discover: Box<RawValue>,
    tool_list: Box<RawValue>,
    lists: ResourceAnswers,
}

/// The resources' answers, written once: the list, the templates (none), and each read.
struct ResourceAnswers {
    list: Box<RawValue>,
    templates: Box<RawValue>,
    card: Box<RawValue>,
}

impl Modern {
    /// Whether `name` is a tool this server lists (what a span may be named by).
    pub(crate) fn knows_tool(&self, name: &str) -> bool {
        self.registry.find(name).is_some()
    }

    pub(crate) fn new(
        hosts: AllowedHosts,
        origins: AllowedOrigins,
        registry: Arc<Registry>,
        resources: &Resources,
        discovery: &impl Serialize,
    ) -> Self {
        let tool_list = json!({
            "resultType": "complete",
            "tools": registry.descriptions(),
            "ttlMs": LIST_TTL_MS,
            "cacheScope": "public",
        });
        Self {
            hosts,
            origins,
            metas: KnownMetas::default(),
            discover: to_raw(discovery),
            tool_list: to_raw(&tool_list),
            registry,
            lists: ResourceAnswers {
                list: to_raw(&resources.list_result()),
                templates: to_raw(&Resources::templates_result()),
                card: to_raw(
                    &resources
                        .read_result(CARD_URI)
                        .expect("grantry serves its card"),
                ),
            },
        }
    }

    /// Reads a request: this era's answer or call, or [`Read::Legacy`].
    pub(crate) fn read(&self, parts: &Parts, body: &[u8]) -> Read {
        let version = parts.headers.get(&MCP_PROTOCOL_VERSION);
        if parts.method != Method::POST {
            return self.not_post(parts, version);
        }
        let message = envelope::read(body);
        let meta = match &message {
            Ok(Message::Request { params, .. }) => self.metas.read(params.meta),
            _ => Arc::default(),
        };
        if !of_this_era(&message, &meta, version, body) {
            return Read::Legacy;
        }
        if let Err(refused) = self.transport(parts) {
            return Read::Answered(refused.into());
        }
        let Ok(version) = version.map(HeaderValue::to_str).transpose() else {
            return Read::Answered(
                Plain(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: Invalid MCP-Protocol-Version header encoding",
                )
                .into(),
            );
        };
        let asked = Asked {
            parts,
            version,
            meta,
        };
        match message {
            Err((to, error)) => answered(&to, &error),
            Ok(Message::Response) => answered(
                &ReplyTo::Nobody,
                &RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    "stateless server does not accept JSON-RPC responses",
                ),
            ),
            Ok(Message::Notification { method, params }) => {
                self.notification(&asked, &method, &params)
            }
            Ok(Message::Request {
                id, method, params, ..
            }) => match self.request(&asked, ReplyTo::Id(id), &method, &params) {
                Ok(read) => read,
                Err((to, error)) => answered(&to, &error),
            },
        }
    }

    /// GET and DELETE of this era, and every other method: 405.
    fn not_post(&self, parts: &Parts, version: Option<&HeaderValue>) -> Read {
        let stream_or_end = parts.method == Method::GET || parts.method == Method::DELETE;
        let modern = version.is_some_and(|v| v.as_bytes() >= MODERN_VERSION.as_bytes());
        if stream_or_end && !modern {
            return Read::Legacy;
        }
        if let Err(refused) = self.host_and_origin(parts) {
            return Read::Answered(refused.into());
        }
        if parts.method == Method::GET && !accepts_sse(&parts.headers) {
            let refused = Plain(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: Client must accept text/event-stream",
            );
            return Read::Answered(refused.into());
        }
        // This era has no GET stream and no session to end; the legacy one has both.
        let allow = if stream_or_end {
            "POST"
        } else {
            "GET, POST, DELETE"
        };
        let mut refused: Response =
            Plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed").into();
        refused
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static(allow));
        Read::Answered(refused)
    }

    fn host_and_origin(&self, parts: &Parts) -> Result<(), Plain> {
        if !self.hosts.allows_request(&parts.headers, &parts.uri) {
            let named = parts.headers.contains_key(HOST) || parts.uri.authority().is_some();
            return Err(if named {
                Plain(
                    StatusCode::FORBIDDEN,
                    "Forbidden: Host header is not allowed",
                )
            } else {
                Plain(StatusCode::BAD_REQUEST, "Bad Request: missing Host header")
            });
        }
        self.origins
            .check(&parts.headers)
            .map_err(|refused| Plain(StatusCode::FORBIDDEN, refused.words()))
    }

    /// What every POST must be: from an allowed host and origin, accepting JSON and SSE,
    /// sending JSON.
    fn transport(&self, parts: &Parts) -> Result<(), Plain> {
        self.host_and_origin(parts)?;
        if !headers::accepts_json_and_sse(&parts.headers) {
            return Err(Plain(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: Client must accept both application/json and text/event-stream",
            ));
        }
        if !headers::sends_json(&parts.headers) {
            return Err(Plain(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Unsupported Media Type: Content-Type must be application/json",
            ));
        }
        Ok(())
    }

    /// A notification: checked like a request's headers, then taken (this era defines none
    /// a server acts on).
    fn notification(&self, asked: &Asked<'_>, method: &str, params: &Params<'_>) -> Read {
        if let Some(version) = asked.version
            && !versions::KNOWN_VERSIONS.contains(&version)
        {
            return answered(&ReplyTo::Nobody, &versions::unsupported(version));
        }
        let name = routed_name(method, params);
        let routed = Routed {
            method,
            name: name.as_deref(),
            mirrors: &[],
            arguments: None,
        };
        if let Err(reason) = self.routing(asked, &routed) {
            return answered(&ReplyTo::Nobody, &reason);
        }
        let mut taken = Response::new(Body::empty());
        *taken.status_mut() = StatusCode::ACCEPTED;
        Read::Answered(taken)
    }

    /// A request, through the version and header checks to its answer or call.
    fn request(
        &self,
        asked: &Asked<'_>,
        to: ReplyTo,
        method: &str,
        params: &Params<'_>,
    ) -> Result<Read, (ReplyTo, RpcError)> {
        let fail = |error: RpcError| (to.clone(), error);
        versions::agree(asked.version, &asked.meta, method).map_err(fail)?;
        let name = routed_name(method, params);
        let entry = (method == "tools/call")
            .then(|| name.as_deref().and_then(|n| self.registry.find(n)))
            .flatten();
        let arguments = Params::read::<Map<String, Value>>(params.arguments);
        let routed = Routed {
            method,
            name: name.as_deref(),
            mirrors: entry.map_or(&[], |e| e.mirrors.as_slice()),
            arguments: arguments.as_ref().ok().and_then(Option::as_ref),
        };
        self.routing(asked, &routed).map_err(fail)?;
        let capabilities = versions::supported(&asked.meta).map_err(fail)?;
        Ok(match method {
            "server/discover" => Read::Answered(jsonrpc::ready_response(&to, &self.discover)),
            "tools/list" => Read::Answered(jsonrpc::ready_response(&to, &self.tool_list)),
            "resources/list" => Read::Answered(jsonrpc::ready_response(&to, &self.lists.list)),
            "resources/templates/list" => {
                Read::Answered(jsonrpc::ready_response(&to, &self.lists.templates))
            }
            "resources/read" => match self.lists.read(params) {
                Ok(card) => Read::Answered(jsonrpc::ready_response(&to, card)),
                Err(refused) => answered(&to, &refused),
            },
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                let request = task::read(asked, method, params, capabilities).map_err(fail)?;
                Read::Task(Box::new(request), to)
            }
            "tools/call" => {
                let call = CallParams {
                    entry,
                    name,
                    arguments,
                    params,
                    capabilities,
                };
                return call.read(asked, to).map(|c| Read::Call(Box::new(c)));
            }
            other => answered(
                &to,
                &RpcError::new(ErrorCode::METHOD_NOT_FOUND, other.to_owned()),
            ),
        })
    }

    /// The routing headers, required from this revision on.
    fn routing(&self, asked: &Asked<'_>, routed: &Routed<'_>) -> Result<(), RpcError> {
        if !checks_routing(asked.version) {
            return Ok(());
        }
        headers::check_routing(&asked.parts.headers, routed)
            .map_err(|reason| RpcError::new(ErrorCode::HEADER_MISMATCH, reason))
    }
}

impl ResourceAnswers {
    /// The answer to a `resources/read`: the resource, or why not.
    fn read(&self, params: &Params<'_>) -> Result<&RawValue, RpcError> {
        match Params::read::<Cow<'_, str>>(params.uri) {
            Ok(Some(uri)) if uri == CARD_URI => Ok(&self.card),
            Ok(Some(uri)) => Err(
                RpcError::invalid_params(format!("Resource not found: {uri}"))
                    .with_data(json!({"uri": uri})),
            ),
            _ => Err(RpcError::invalid_params(
                "resources/read needs a `uri` string",
            )),
        }
    }
}

/// What a request asked with: its head, its version header and its `_meta`.
struct Asked<'a> {
    parts: &'a Parts,
    version: Option<&'a str>,
    meta: Arc<Meta>,
}

/// Whether a request is this era's: an `initialize` rmcp takes never is; one whose `_meta`
/// names its version is; anything else is when its version header names this revision or a
/// later one.
fn of_this_era(
    message: &Result<Message<'_>, envelope::Unreadable>,
    meta: &Meta,
    version: Option<&HeaderValue>,
    body: &[u8],
) -> bool {
    if let Ok(message) = message {
        if let Message::Request { method, .. } = message
            && method == "initialize"
            && legacy::is_initialize(body)
        {
            return false;
        }
        if meta.version.is_some() {
            return true;
        }
    }
    version.is_some_and(|v| v.as_bytes() >= MODERN_VERSION.as_bytes())
}

/// What the routing header `Mcp-Name` repeats for `method`, when the body gives it as a string.
fn routed_name<'p>(method: &str, params: &Params<'p>) -> Option<Cow<'p, str>> {
    let member = match method {
        "tools/call" | "prompts/get" => params.name,
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => params.uri,
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.task_id,
        _ => None,
    };
    Params::read::<Cow<'_, str>>(member).ok().flatten()
}

fn answered(to: &ReplyTo, error: &RpcError) -> Read {
    Read::Answered(jsonrpc::error_response(to, error))
}

fn accepts_sse(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get_all(axum::http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("text/event-stream"))
}

/// A refusal before any message, in plain words (as rmcp wrote them: no content type).
struct Plain(StatusCode, &'static str);

impl From<Plain> for Response {
    fn from(Plain(status, words): Plain) -> Self {
        let mut response = Response::new(Body::from(words));
        *response.status_mut() = status;
        response
    }
}

fn to_raw(value: &impl Serialize) -> Box<RawValue> {
    let text = serde_json::to_string(value).expect("grantry's own lists serialize");
    RawValue::from_string(text).expect("serde_json writes JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_initialize_is_never_this_eras_and_a_versioned_meta_always_is() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        let initialize = envelope::read(body);
        let modern = HeaderValue::from_static("2026-07-28");
        assert!(!of_this_era(
            &initialize,
            &Meta::default(),
            Some(&modern),
            body
        ));
        let call = envelope::read(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let versioned = Meta {
            version: Some("2025-11-25".into()),
            ..Meta::default()
        };
        assert!(of_this_era(&call, &versioned, None, b""));
        assert!(!of_this_era(&call, &Meta::default(), None, b""));
        let legacy = HeaderValue::from_static("2025-11-25");
        assert!(!of_this_era(&call, &Meta::default(), Some(&legacy), b""));
        let later = HeaderValue::from_static("2099-01-01");
        assert!(of_this_era(&call, &Meta::default(), Some(&later), b""));
    }
}
