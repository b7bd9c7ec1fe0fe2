//! The direct path's check of a request's `_meta`, remembered: a client sends the same `_meta`
//! on every request, and reading it into rmcp's types (to accept exactly what rmcp accepts) is
//! a sixth of a `server/discover`.

use std::sync::RwLock;

use rmcp::model::{ClientCapabilities, Implementation};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::MODERN_VERSION;
use super::capabilities::Capabilities;

/// `_meta` texts that hold, at most this many (past it, a new one replaces the oldest).
const CAPACITY: usize = 64;

/// The request `_meta` of this revision: its two required members and, optionally, the client.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: &'a str,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow)]
    capabilities: &'a RawValue,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow)]
    client_info: Option<&'a RawValue>,
}

impl Meta<'_> {
    /// Holds as rmcp reads it: this revision, and capabilities and client info of rmcp's types.
    fn holds(&self) -> bool {
        self.protocol_version == MODERN_VERSION
            && serde_json::from_str::<ClientCapabilities>(self.capabilities.get()).is_ok()
            && self
                .client_info
                .is_none_or(|info| serde_json::from_str::<Implementation>(info.get()).is_ok())
    }
}

/// `_meta` texts found to hold, with the client capabilities each declares.
#[derive(Default)]
pub(super) struct KnownMetas {
    entries: RwLock<Entries>,
}

#[derive(Default)]
struct Entries {
    list: Vec<(Box<str>, Capabilities)>,
    /// The entry a new text replaces once the list is full.
    next: usize,
}

impl KnownMetas {
    /// The client capabilities of `meta` if it holds (see [`Meta::holds`]); `None` when it
    /// does not, which sends the request to rmcp.
    pub(super) fn capabilities(&self, meta: &RawValue) -> Option<Capabilities> {
        let text = meta.get();
        {
            let entries = self
                .entries
                .read()
                .expect("meta cache lock is never poisoned");
            if let Some((_, capabilities)) = entries.list.iter().find(|(t, _)| **t == *text) {
                return Some(*capabilities);
            }
        }
        let parsed: Meta<'_> = serde_json::from_str(text).ok()?;
        if !parsed.holds() {
            return None;
        }
        let declared: Value = serde_json::from_str(parsed.capabilities.get()).ok()?;
        let capabilities = Capabilities::read(&declared);
        let mut entries = self
            .entries
            .write()
            .expect("meta cache lock is never poisoned");
        let entry = (Box::from(text), capabilities);
        if entries.list.len() < CAPACITY {
            entries.list.push(entry);
        } else {
            let at = entries.next;
            entries.list[at] = entry;
            entries.next = (at + 1) % CAPACITY;
        }
        Some(capabilities)
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
    fn a_meta_that_holds_gives_its_capabilities_first_time_and_remembered() {
        let known = KnownMetas::default();
        for _ in 0..2 {
            let capabilities = known.capabilities(&raw(GOOD)).expect("holds");
            assert!(capabilities.url_elicitation);
        }
        assert_eq!(known.entries.read().unwrap().list.len(), 1);
    }

    #[test]
    fn a_meta_that_does_not_hold_is_refused_and_not_remembered() {
        let known = KnownMetas::default();
        for refused in [
            r#"{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"x":1}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":1}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}"#,
        ] {
            assert!(known.capabilities(&raw(refused)).is_none(), "{refused}");
        }
        assert!(known.entries.read().unwrap().list.is_empty());
    }

    #[test]
    fn past_capacity_new_texts_replace_the_oldest() {
        let known = KnownMetas::default();
        let nth = |n: usize| {
            format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"experimental":{{"n{n}":{{}}}}}}}}"#
            )
        };
        for n in 0..CAPACITY + 1 {
            assert!(known.capabilities(&raw(&nth(n))).is_some());
        }
        let entries = known.entries.read().unwrap();
        assert_eq!(entries.list.len(), CAPACITY);
        assert!(entries.list.iter().any(|(t, _)| **t == *nth(CAPACITY)));
        assert!(!entries.list.iter().any(|(t, _)| **t == *nth(0)));
    }
}
