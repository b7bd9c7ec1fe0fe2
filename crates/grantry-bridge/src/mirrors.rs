//! The arguments each tool mirrors into `Mcp-Param-*` headers (SEP-2243 `x-mcp-header`), as
//! the server's `tools/list` declares them. A tool whose declarations are invalid (an empty
//! or non-token header name, a value that is not a string, integer or boolean, a name twice)
//! is left out of the listing the client gets, and is not called.

use std::collections::HashMap;
use std::sync::Mutex;

use http::HeaderName;
use serde_json::Value;

/// One argument a tool mirrors into a header.
#[derive(Debug, Clone)]
pub(super) struct Mirror {
    pub(super) argument: String,
    pub(super) header: HeaderName,
}

/// Why a tool's declarations are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Invalid {
    #[error("the x-mcp-header of {0:?} is empty or not a string")]
    Empty(String),
    #[error("the x-mcp-header {0:?} is not an HTTP header name")]
    Charset(String),
    #[error("{0:?} is mirrored into a header but is not a string, an integer or a boolean")]
    NotPrimitive(String),
    #[error("the x-mcp-header {0:?} is declared twice")]
    Duplicate(String),
}

/// Per tool of the last listing: its mirrors, or why it was left out. `None` until a listing
/// was seen.
type Known = Option<HashMap<String, Result<Vec<Mirror>, Invalid>>>;

#[derive(Default)]
pub(super) struct Mirrors(Mutex<Known>);

impl Mirrors {
    /// Whether a `tools/list` was seen (a tool it did not list mirrors nothing).
    pub(super) fn known(&self) -> bool {
        self.lock().is_some()
    }

    /// Learns from a `tools/list` result, and removes from it the tools it refuses.
    pub(super) fn learn(&self, result: &mut Value) {
        let Some(tools) = result["tools"].as_array_mut() else {
            return;
        };
        let mut known = self.lock();
        let learned = known.get_or_insert_with(HashMap::new);
        tools.retain(|tool| {
            let Some(name) = tool["name"].as_str() else {
                return true;
            };
            let mirrors = mirrors_of(tool);
            if let Err(invalid) = &mirrors {
                tracing::warn!(tool = name, %invalid, "left out a tool with an invalid x-mcp-header");
            }
            let keep = mirrors.is_ok();
            learned.insert(name.to_owned(), mirrors);
            keep
        });
    }

    /// What `tool` mirrors (nothing if it was not listed), or why it was left out.
    pub(super) fn of(&self, tool: &str) -> Result<Vec<Mirror>, Invalid> {
        let known = self.lock();
        let declared = known.as_ref().and_then(|known| known.get(tool));
        declared.cloned().unwrap_or_else(|| Ok(Vec::new()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        self.0.lock().expect("mirrors lock is never poisoned")
    }
}

fn mirrors_of(tool: &Value) -> Result<Vec<Mirror>, Invalid> {
    let Some(properties) = tool["inputSchema"]["properties"].as_object() else {
        return Ok(Vec::new());
    };
    let mut mirrors: Vec<Mirror> = Vec::new();
    for (argument, schema) in properties {
        let Some(declared) = schema.get("x-mcp-header") else {
            continue;
        };
        let name = declared
            .as_str()
            .filter(|name| !name.is_empty())
            .ok_or_else(|| Invalid::Empty(argument.clone()))?;
        if !name.bytes().all(is_token_byte) {
            return Err(Invalid::Charset(name.to_owned()));
        }
        if !is_primitive(&schema["type"]) {
            return Err(Invalid::NotPrimitive(argument.clone()));
        }
        let header = HeaderName::try_from(format!("mcp-param-{name}"))
            .map_err(|_| Invalid::Charset(name.to_owned()))?;
        // Header names are lowercase here: a name twice in any case is a duplicate.
        if mirrors.iter().any(|mirror| mirror.header == header) {
            return Err(Invalid::Duplicate(name.to_owned()));
        }
        mirrors.push(Mirror {
            argument: argument.clone(),
            header,
        });
    }
    Ok(mirrors)
}

/// RFC 9110 `tchar`: what a header name is made of.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A string, an integer or a boolean (optionally nullable): values a header can carry
/// exactly. A `number` is not: its text form is not one value.
fn is_primitive(kind: &Value) -> bool {
    let primitive = |kind: &Value| matches!(kind.as_str(), Some("string" | "integer" | "boolean"));
    match kind {
        Value::Array(kinds) => {
            kinds.iter().any(primitive) && kinds.iter().all(|k| primitive(k) || k == "null")
        }
        kind => primitive(kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, properties: Value) -> Value {
        json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
    }

    #[test]
    fn a_tool_with_an_invalid_x_mcp_header_is_left_out_and_the_others_kept() {
        let string = |header: &str| json!({"type": "string", "x-mcp-header": header});
        let mut listing = json!({"tools": [
            tool("valid", json!({"region": string("Region"), "n": {"type": "integer",
                "x-mcp-header": "N"}, "plain": {"type": "number"}})),
            tool("nullable", json!({"v": {"type": ["boolean", "null"], "x-mcp-header": "V"}})),
            tool("empty", json!({"v": string("")})),
            tool("not_text", json!({"v": {"type": "string", "x-mcp-header": 7}})),
            tool("object", json!({"v": {"type": "object", "x-mcp-header": "V"}})),
            tool("array", json!({"v": {"type": "array", "x-mcp-header": "V"}})),
            tool("null", json!({"v": {"type": "null", "x-mcp-header": "V"}})),
            tool("number", json!({"v": {"type": "number", "x-mcp-header": "V"}})),
            tool("untyped", json!({"v": {"x-mcp-header": "V"}})),
            tool("twice", json!({"a": string("Region"), "b": string("Region")})),
            tool("twice_in_case", json!({"a": string("MyField"), "b": string("myfield")})),
            tool("space", json!({"v": string("My Region")})),
            tool("colon", json!({"v": string("Region:Primary")})),
            tool("non_ascii", json!({"v": string("Région")})),
            tool("control", json!({"v": string("Region\t1")})),
        ]});
        let mirrors = Mirrors::default();
        mirrors.learn(&mut listing);
        let kept: Vec<&str> = listing["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap())
            .collect();
        assert_eq!(kept, ["valid", "nullable"]);
        assert_eq!(mirrors.of("valid").unwrap().len(), 2);
        assert_eq!(
            mirrors.of("twice_in_case").unwrap_err(),
            Invalid::Duplicate("myfield".into())
        );
        assert_eq!(
            mirrors.of("number").unwrap_err(),
            Invalid::NotPrimitive("v".into())
        );
        assert!(mirrors.of("never_listed").unwrap().is_empty());
    }
}
