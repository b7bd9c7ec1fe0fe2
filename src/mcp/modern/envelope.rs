//! The JSON-RPC message of a 2026-07-28 POST, read once from the body with its members
//! borrowed: a request, a notification, or a response (which this era never takes). A body
//! that is none of them gets its JSON-RPC error ([`crate::mcp::malformed`] words it).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::mcp::jsonrpc::{ErrorCode, ReplyTo, RequestId, RpcError};
use crate::mcp::malformed;

/// A message as read.
pub(super) enum Message<'a> {
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Params<'a>,
        /// The params as written (an `initialize`'s are rmcp's to judge).
        raw_params: Option<&'a RawValue>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Params<'a>,
    },
    /// A response or an error from the client.
    Response,
}

/// A request's params: each member a method may have, as written (`null` counts as absent);
/// members no method of grantry's reads are ignored.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Params<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub uri: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub task_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub request_state: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub input_responses: Option<&'a RawValue>,
}

impl<'a> Params<'a> {
    /// `member` read as `T`; an absent or `null` member is `Ok(None)`, one of another type
    /// `Err`.
    pub(super) fn read<T: Deserialize<'a>>(member: Option<&'a RawValue>) -> Result<Option<T>, ()> {
        match member.map(RawValue::get) {
            None | Some("null") => Ok(None),
            Some(text) => serde_json::from_str(text).map(Some).map_err(|_| ()),
        }
    }
}

/// The top level, each member as written. Repeated members make it unreadable.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Member<'a>,
    #[serde(borrow, default)]
    id: Member<'a>,
    #[serde(borrow, default)]
    method: Member<'a>,
    #[serde(borrow, default)]
    params: Member<'a>,
    #[serde(borrow, default)]
    result: Member<'a>,
    #[serde(borrow, default)]
    error: Member<'a>,
}

/// A member as written, `null` included (an id of `null` is no notification); `None` when
/// absent.
#[derive(Default)]
struct Member<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(deserializer).map(|raw| Member(Some(raw)))
    }
}

/// A message that cannot be taken, and whom its error answers.
pub(super) type Unreadable = (ReplyTo, RpcError);

/// Reads the body as one message.
pub(super) fn read(body: &[u8]) -> Result<Message<'_>, Unreadable> {
    // Only an object is a message (serde would read a struct from an array too).
    let object = body
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    let envelope = object
        .then(|| serde_json::from_slice::<Envelope<'_>>(body).ok())
        .flatten();
    let Some(envelope) = envelope else {
        return Err(unreadable(body));
    };
    let id = envelope.id.0.map(|raw| parse_value(raw.get()));
    let reply_to = match id.as_ref().and_then(RequestId::read) {
        Some(id) => ReplyTo::Id(id),
        None => ReplyTo::Unknown,
    };
    let invalid = |to: ReplyTo| {
        (
            to,
            RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request"),
        )
    };
    let jsonrpc = envelope
        .jsonrpc
        .0
        .and_then(|raw| serde_json::from_str::<Cow<'_, str>>(raw.get()).ok());
    if jsonrpc.as_deref() != Some("2.0") {
        return Err(invalid(reply_to));
    }
    let Some(method) = envelope.method.0 else {
        if envelope.result.0.is_some() || envelope.error.0.is_some() {
            return Ok(Message::Response);
        }
        return Err(invalid(reply_to));
    };
    let Ok(method) = serde_json::from_str::<Cow<'_, str>>(method.get()) else {
        return Err(invalid(reply_to));
    };
    if envelope.result.0.is_some() || envelope.error.0.is_some() {
        return Err(invalid(reply_to));
    }
    let params = params(envelope.params.0).map_err(|error| (reply_to.clone(), error))?;
    match id {
        None => Ok(Message::Notification { method, params }),
        Some(id) => match RequestId::read(&id) {
            Some(id) => Ok(Message::Request {
                id,
                method,
                params,
                raw_params: envelope.params.0,
            }),
            None => Err(invalid(ReplyTo::Unknown)),
        },
    }
}

fn parse_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The params member: absent or `null`, or an object.
fn params(raw: Option<&RawValue>) -> Result<Params<'_>, RpcError> {
    let Some(text) = raw.map(RawValue::get).filter(|t| *t != "null") else {
        return Ok(Params::default());
    };
    if !text.starts_with('{') {
        return Err(RpcError::invalid_params(
            "Invalid params: params must be an object",
        ));
    }
    serde_json::from_str(text)
        .map_err(|_| RpcError::invalid_params("Invalid params: a member is given twice"))
}

/// The error for a body that is not one message object (not JSON, a batch, a member twice).
fn unreadable(body: &[u8]) -> Unreadable {
    match malformed::classify(body) {
        Some(found) => {
            let to = RequestId::read(&found.id).map_or(ReplyTo::Unknown, ReplyTo::Id);
            (to, RpcError::new(found.code, found.message))
        }
        None => (
            ReplyTo::Unknown,
            RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(body: &str) -> (ReplyTo, i32, String) {
        match read(body.as_bytes()) {
            Err((to, error)) => (to, error.code.0, error.message),
            Ok(_) => panic!("{body} was read as a message"),
        }
    }

    #[test]
    fn a_request_a_notification_and_a_response_are_told_apart() {
        let request =
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{},"cursor":5}}"#;
        let Ok(Message::Request {
            id, method, params, ..
        }) = read(request.as_bytes())
        else {
            panic!("a request");
        };
        assert_eq!(
            (id, method.as_ref()),
            (RequestId::String("a".into()), "tools/list")
        );
        assert_eq!(params.meta.map(RawValue::get), Some("{}"));
        assert!(matches!(
            read(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Message::Notification { .. })
        ));
        assert!(matches!(
            read(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Message::Response)
        ));
        assert!(matches!(
            read(br#"{"jsonrpc":"2.0","method":"x","extra":1,"params":null}"#),
            Ok(Message::Notification { .. })
        ));
    }

    #[test]
    fn what_is_no_message_gets_its_error_with_the_id_where_it_can_be_read() {
        let seven = ReplyTo::Id(RequestId::Number(7));
        assert_eq!(error_of("{not json").1, -32700);
        assert_eq!(error_of("").1, -32700);
        assert_eq!(
            error_of(r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#),
            (ReplyTo::Unknown, -32600, "Invalid Request".into())
        );
        assert_eq!(
            error_of(r#"{"jsonrpc":"1.0","id":7,"method":"x"}"#).0,
            seven
        );
        assert_eq!(
            error_of(r#"{"jsonrpc":"2.0","id":7,"method":"x","method":"y"}"#),
            (seven.clone(), -32600, "Invalid Request".into())
        );
        for id in ["1.5", "null", "{}", "18446744073709551615", "true"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#);
            assert_eq!(
                error_of(&body),
                (ReplyTo::Unknown, -32600, "Invalid Request".into()),
                "{id}"
            );
        }
        assert_eq!(
            error_of(r#"{"jsonrpc":"2.0","id":7,"method":"x","params":[1]}"#),
            (
                seven,
                -32602,
                "Invalid params: params must be an object".into()
            )
        );
        assert_eq!(error_of(r#"{"jsonrpc":"2.0","id":7,"method":5}"#).1, -32600);
        assert_eq!(error_of(r#"{"jsonrpc":"2.0","id":7}"#).1, -32600);
    }
}
