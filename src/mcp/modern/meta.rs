//! A 2026-07-28 request's `_meta`: the protocol version and client capabilities every request
//! must carry, what a call's notifications need (its progress token and log level), and the
//! name the client declares (kept with each use of a connection, marked unverified).
//! Clients send the same `_meta` on every request, so a text once read is remembered.

use std::sync::{Arc, RwLock};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::identity::McpClient;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::notify::LogLevel;

/// `_meta` texts remembered, at most this many (past it, a new one replaces the oldest).
const CAPACITY: usize = 64;

/// The members of a request's `_meta` the edge acts on.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Meta {
    /// `io.modelcontextprotocol/protocolVersion`, when it is a string.
    pub(crate) version: Option<Box<str>>,
    /// `io.modelcontextprotocol/clientCapabilities`, when it is one.
    pub(crate) capabilities: Option<Capabilities>,
    /// `io.modelcontextprotocol/logLevel`: without one, a call sends no log messages.
    pub(crate) log_level: Option<LogLevel>,
    /// `progressToken`, a string or an integer.
    pub(crate) progress_token: Option<Value>,
    /// `io.modelcontextprotocol/clientInfo`'s `name`.
    pub(crate) client: Option<McpClient>,
}

/// The part of `clientInfo` kept.
#[derive(Deserialize)]
struct ClientInfo<'a> {
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
}

/// The members, as written.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    log_level: Option<&'a RawValue>,
    #[serde(rename = "progressToken", borrow, default)]
    progress_token: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    client_info: Option<&'a RawValue>,
}

impl Meta {
    /// Reads `_meta`; one that is not an object declares nothing.
    fn read(text: &str) -> Self {
        let Ok(members) = serde_json::from_str::<Members<'_>>(text) else {
            return Self::default();
        };
        Self {
            version: text_of(members.version)
                .and_then(|v| serde_json::from_str::<String>(v).ok())
                .map(String::into_boxed_str),
            capabilities: text_of(members.capabilities).and_then(Capabilities::read),
            log_level: text_of(members.log_level).and_then(|l| serde_json::from_str(l).ok()),
            progress_token: text_of(members.progress_token)
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .filter(|t| t.is_string() || t.is_i64() || t.is_u64()),
            client: text_of(members.client_info)
                .and_then(|c| serde_json::from_str::<ClientInfo<'_>>(c).ok())
                .and_then(|c| McpClient::declared(&c.name)),
        }
    }
}

fn text_of(raw: Option<&RawValue>) -> Option<&str> {
    raw.map(RawValue::get)
}

/// `_meta` texts read, with what they said.
#[derive(Default)]
pub(super) struct KnownMetas {
    entries: RwLock<Entries>,
}

#[derive(Default)]
struct Entries {
    list: Vec<(Box<str>, Arc<Meta>)>,
    /// The entry a new text replaces once the list is full.
    next: usize,
}

impl KnownMetas {
    /// What `meta` says (`None`: no `_meta` at all).
    pub(super) fn read(&self, meta: Option<&RawValue>) -> Arc<Meta> {
        let Some(text) = meta.map(RawValue::get) else {
            return Arc::default();
        };
        {
            let entries = self
                .entries
                .read()
                .expect("meta cache lock is never poisoned");
            if let Some((_, known)) = entries.list.iter().find(|(t, _)| **t == *text) {
                return known.clone();
            }
        }
        let read = Arc::new(Meta::read(text));
        // A progress token is per request: such a text is not seen again.
        if read.progress_token.is_none() {
            self.remember(text, &read);
        }
        read
    }

    fn remember(&self, text: &str, meta: &Arc<Meta>) {
        let mut entries = self
            .entries
            .write()
            .expect("meta cache lock is never poisoned");
        let entry = (Box::from(text), meta.clone());
        if entries.list.len() < CAPACITY {
            entries.list.push(entry);
        } else {
            let at = entries.next;
            entries.list[at] = entry;
            entries.next = (at + 1) % CAPACITY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    const GOOD: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}}}"#;

    #[test]
    fn a_meta_is_read_once_and_remembered() {
        let known = KnownMetas::default();
        for _ in 0..2 {
            let meta = known.read(Some(&raw(GOOD)));
            assert_eq!(meta.version.as_deref(), Some("2026-07-28"));
            assert!(meta.capabilities.unwrap().url_elicitation);
        }
        assert_eq!(known.entries.read().unwrap().list.len(), 1);
    }

    #[test]
    fn members_of_the_wrong_type_are_not_declared() {
        let known = KnownMetas::default();
        let meta = known.read(Some(&raw(
            r#"{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/clientCapabilities":{"elicitation":5}}"#,
        )));
        assert_eq!(meta.version, None);
        assert_eq!(meta.capabilities, None);
        assert_eq!(*known.read(Some(&raw("[]"))), Meta::default());
        assert_eq!(*known.read(None), Meta::default());
    }

    #[test]
    fn a_meta_with_a_progress_token_is_not_remembered() {
        let known = KnownMetas::default();
        let meta = known.read(Some(&raw(
            r#"{"progressToken":7,"io.modelcontextprotocol/logLevel":"info"}"#,
        )));
        assert_eq!(meta.progress_token, Some(Value::from(7)));
        assert_eq!(meta.log_level, Some(LogLevel::Info));
        assert!(known.entries.read().unwrap().list.is_empty());
    }

    #[test]
    fn past_capacity_new_texts_replace_the_oldest() {
        let known = KnownMetas::default();
        let nth = |n: usize| format!(r#"{{"n":{n}}}"#);
        for n in 0..=CAPACITY {
            known.read(Some(&raw(&nth(n))));
        }
        let entries = known.entries.read().unwrap();
        assert_eq!(entries.list.len(), CAPACITY);
        assert!(entries.list.iter().any(|(t, _)| **t == *nth(CAPACITY)));
        assert!(!entries.list.iter().any(|(t, _)| **t == *nth(0)));
    }
}
