//! The tools `/mcp` lists, built once at start: an extension's first (see [`crate::mcp_calls::extension`]),
//! then grantry's own. A call's tool is looked up here by its name once ([`Registry::find`]);
//! what the tool mirrors into `Mcp-Param-*` headers is read from its own input schema.

use std::sync::Arc;

use axum::http::HeaderName;
use serde::Serialize;
use serde_json::Value;

use crate::mcp_calls::apps;
use crate::tools::{CardPart, Tool, ToolSpec};

/// One tool as `tools/list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDescription {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Where it stands in the connect card, for hosts that render MCP Apps.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Whether it runs as an MCP task; grantry's own tools say nothing (a round of theirs
    /// becomes a task without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<Execution>,
}

/// How a tool runs (`execution` in `tools/list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Execution {
    pub task_support: TaskSupport,
}

/// Whether a tool's call runs as a task, for a client that takes tasks (the Tasks
/// extension's `taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never: always answered at once.
    #[default]
    Forbidden,
    /// As a task for a client that takes tasks, at once for any other.
    Optional,
    /// Only as a task: a client that does not take tasks gets `-32021`.
    Required,
}

impl ToolDescription {
    pub(crate) fn task_support(&self) -> TaskSupport {
        self.execution.map(|e| e.task_support).unwrap_or_default()
    }
}

impl From<ToolSpec> for ToolDescription {
    fn from(spec: ToolSpec) -> Self {
        Self {
            name: spec.name.to_owned(),
            title: Some(spec.title.to_owned()),
            description: spec.description.to_owned(),
            input_schema: spec.input_schema,
            output_schema: spec.output_schema,
            annotations: Some(spec.annotations),
            meta: None,
            execution: None,
        }
    }
}

impl From<Tool> for ToolDescription {
    fn from(tool: Tool) -> Self {
        let meta = match tool.card_part() {
            CardPart::None => None,
            CardPart::Shows => Some(apps::card_tool_meta()),
            CardPart::CalledByCard => Some(apps::app_only_tool_meta()),
        };
        Self {
            meta,
            ..Self::from(tool.spec())
        }
    }
}

/// A listed tool, as a call names it: one of grantry's, or one an extension added.
#[derive(Debug, Clone)]
pub(crate) enum Listed {
    Own(Tool),
    Added(Arc<str>),
}

impl Listed {
    pub(crate) fn name(&self) -> &str {
        match self {
            Self::Own(tool) => tool.name(),
            Self::Added(name) => name,
        }
    }
}

/// An argument a tool mirrors into a header (SEP-2243 `x-mcp-header`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mirror {
    /// The argument (a top-level property of the input schema).
    pub(crate) argument: String,
    /// `Mcp-Param-` and the name declared, as refusals spell it.
    pub(crate) spelled: String,
    /// The header, looked up by this name (`None`: the declaration is no header name).
    pub(crate) name: Option<HeaderName>,
}

impl Mirror {
    /// `argument`, mirrored into `Mcp-Param-{header}`.
    pub(crate) fn new(argument: &str, header: &str) -> Self {
        let spelled = format!("Mcp-Param-{header}");
        Self {
            argument: argument.to_owned(),
            name: HeaderName::from_bytes(spelled.to_ascii_lowercase().as_bytes()).ok(),
            spelled,
        }
    }
}

/// A listed tool with what the edge checks of its calls.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) listed: Listed,
    /// Sorted by argument: the order the headers are checked in.
    pub(crate) mirrors: Vec<Mirror>,
}

/// Every listed tool, in `tools/list` order.
pub(crate) struct Registry {
    descriptions: Vec<ToolDescription>,
    entries: Vec<(String, Entry)>,
}

impl Registry {
    /// grantry's tools, after those an extension `added`.
    pub(crate) fn new(added: Vec<ToolDescription>) -> Self {
        // An extension's tools come first: the conformance suite probes headers by calling
        // the first listed tool with `{}` from a client without URL elicitation.
        let added = added.into_iter().map(|d| {
            let listed = Listed::Added(Arc::from(d.name.as_str()));
            (d, listed)
        });
        let own = Tool::ALL
            .into_iter()
            .map(|tool| (ToolDescription::from(tool), Listed::Own(tool)));
        let (descriptions, entries) = added
            .chain(own)
            .map(|(description, listed)| {
                let entry = Entry {
                    listed,
                    mirrors: mirrors_of(&description.input_schema),
                };
                let named = (description.name.clone(), entry);
                (description, named)
            })
            .unzip();
        Self {
            descriptions,
            entries,
        }
    }

    /// The tool called `name`, if one is listed.
    pub(crate) fn find(&self, name: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find_map(|(listed, entry)| (listed == name).then_some(entry))
    }

    /// What `tools/list` shows.
    pub(crate) fn descriptions(&self) -> &[ToolDescription] {
        &self.descriptions
    }
}

/// The top-level properties of `schema` that declare an `x-mcp-header`, sorted by name.
fn mirrors_of(schema: &Value) -> Vec<Mirror> {
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    let mut mirrors: Vec<Mirror> = properties
        .iter()
        .filter_map(|(argument, property)| {
            let header = property["x-mcp-header"]
                .as_str()
                .filter(|h| !h.is_empty())?;
            Some(Mirror::new(argument, header))
        })
        .collect();
    mirrors.sort_by(|a, b| a.argument.cmp(&b.argument));
    mirrors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_own_tool_is_found_once_with_the_headers_its_schema_declares() {
        let registry = Registry::new(Vec::new());
        assert_eq!(registry.descriptions().len(), Tool::ALL.len());
        for tool in Tool::ALL {
            let entry = registry.find(tool.name()).expect("listed");
            assert!(matches!(entry.listed, Listed::Own(t) if t == tool));
            let expected: Vec<Mirror> = tool
                .mirrored()
                .iter()
                .map(|(argument, header)| Mirror::new(argument, header))
                .collect();
            assert_eq!(entry.mirrors, expected, "{}", tool.name());
        }
        assert!(registry.find("test_simple_text").is_none());
    }
}
