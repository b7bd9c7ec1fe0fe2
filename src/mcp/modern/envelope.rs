//! The JSON-RPC message of a 2026-07-28 POST, read once from the body with its members
//! borrowed: a request, a notification, or a response (which this era never takes). A body
//! that is none of them gets its JSON-RPC error ([`crate::mcp_wire::malformed`] words it).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::mcp_wire::jsonrpc::{ErrorCode, ReplyTo, RequestId, RpcError};
use crate::mcp_wire::malformed;

/// A message as read.
pub(super) enum Message<'a> {
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Params<'a>,
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
    pub(crate) meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) uri: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) task_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) request_state: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) input_responses: Option<&'a RawValue>,
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

/// The top level. Members of the wrong type, or repeated, make it unreadable (then
/// [`malformed`] says why).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default)]
    id: IdMember,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: ParamsMember<'a>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// The `id` member: absent (a notification), or present as a valid id or as something no
/// request may carry (`null`, a fraction, an object).
#[derive(Default)]
enum IdMember {
    #[default]
    Absent,
    Valid(RequestId),
    Invalid,
}

impl<'de> Deserialize<'de> for IdMember {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = IdMember;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request id")
    }

    fn visit_i64<E>(self, n: i64) -> Result<IdMember, E> {
        Ok(IdMember::Valid(RequestId::Number(n)))
    }

    fn visit_u64<E>(self, n: u64) -> Result<IdMember, E> {
        Ok(i64::try_from(n).map_or(IdMember::Invalid, |n| IdMember::Valid(RequestId::Number(n))))
    }

    fn visit_f64<E>(self, f: f64) -> Result<IdMember, E> {
        let whole = f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0;
        Ok(if whole {
            IdMember::Valid(RequestId::Number(f as i64))
        } else {
            IdMember::Invalid
        })
    }

    fn visit_str<E>(self, s: &str) -> Result<IdMember, E> {
        Ok(IdMember::Valid(RequestId::String(s.to_owned())))
    }

    fn visit_unit<E>(self) -> Result<IdMember, E> {
        Ok(IdMember::Invalid)
    }

    fn visit_bool<E>(self, _: bool) -> Result<IdMember, E> {
        Ok(IdMember::Invalid)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IdMember, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(IdMember::Invalid)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IdMember, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(IdMember::Invalid)
    }
}

/// The `params` member, read where it is (the body is scanned once): absent or `null`, an
/// object, or something else (which no method takes).
#[derive(Default)]
enum ParamsMember<'a> {
    #[default]
    Absent,
    Object(Params<'a>),
    NotObject,
}

impl<'de: 'a, 'a> Deserialize<'de> for ParamsMember<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ParamsVisitor(std::marker::PhantomData))
    }
}

struct ParamsVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ParamsVisitor<'a> {
    type Value = ParamsMember<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ParamsMember<'a>, A::Error> {
        Params::deserialize(MapAccessDeserializer::new(map)).map(ParamsMember::Object)
    }

    fn visit_unit<E>(self) -> Result<ParamsMember<'a>, E> {
        Ok(ParamsMember::Absent)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ParamsMember<'a>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ParamsMember::NotObject)
    }

    fn visit_bool<E>(self, _: bool) -> Result<ParamsMember<'a>, E> {
        Ok(ParamsMember::NotObject)
    }

    fn visit_i64<E>(self, _: i64) -> Result<ParamsMember<'a>, E> {
        Ok(ParamsMember::NotObject)
    }

    fn visit_u64<E>(self, _: u64) -> Result<ParamsMember<'a>, E> {
        Ok(ParamsMember::NotObject)
    }

    fn visit_f64<E>(self, _: f64) -> Result<ParamsMember<'a>, E> {
        Ok(ParamsMember::NotObject)
    }

    fn visit_str<E>(self, _: &str) -> Result<ParamsMember<'a>, E> {
        Ok(ParamsMember::NotObject)
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
    let reply_to = match &envelope.id {
        IdMember::Valid(id) => ReplyTo::Id(id.clone()),
        IdMember::Absent | IdMember::Invalid => ReplyTo::Unknown,
    };
    let invalid = |to: ReplyTo| {
        (
            to,
            RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request"),
        )
    };
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return Err(invalid(reply_to));
    }
    let answered = envelope.result.is_some() || envelope.error.is_some();
    let Some(method) = envelope.method else {
        return if answered {
            Ok(Message::Response)
        } else {
            Err(invalid(reply_to))
        };
    };
    if answered {
        return Err(invalid(reply_to));
    }
    let params = match envelope.params {
        ParamsMember::Absent => Params::default(),
        ParamsMember::Object(params) => params,
        ParamsMember::NotObject => {
            let error = RpcError::invalid_params("Invalid params: params must be an object");
            return Err((reply_to, error));
        }
    };
    match envelope.id {
        IdMember::Absent => Ok(Message::Notification { method, params }),
        IdMember::Valid(id) => Ok(Message::Request { id, method, params }),
        IdMember::Invalid => Err(invalid(ReplyTo::Unknown)),
    }
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
