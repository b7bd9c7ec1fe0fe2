//! What a `tools/call` answers, as grantry writes it: `complete` with the tool's content, or
//! `input_required` with what the client must ask its person (MRTR) and the sealed state the
//! retry brings back. The legacy era turns the same values into rmcp's ([`crate::mcp_legacy`]).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::metrics::Outcome;
use crate::tools::ToolResult;

/// A tool call's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "resultType", rename_all = "snake_case")]
pub enum CallAnswer {
    Complete(CallResult),
    InputRequired(InputRequired),
}

impl CallAnswer {
    /// How the answer counts in the request metrics.
    pub(crate) fn outcome(&self) -> Outcome {
        match self {
            Self::Complete(_) => Outcome::Complete,
            Self::InputRequired(_) => Outcome::InputRequired,
        }
    }
}

impl From<ToolResult> for CallAnswer {
    fn from(result: ToolResult) -> Self {
        Self::Complete(result.into())
    }
}

/// A finished call: what the model reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    pub content: Vec<Content>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    pub is_error: bool,
    /// What the result carries besides the model's content (the connect card's link).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallResult {
    /// A result of one text (a tool error when `is_error`).
    pub fn text(text: impl Into<String>, is_error: bool) -> Self {
        Self {
            content: vec![Content::text(text)],
            structured_content: None,
            is_error,
            meta: None,
        }
    }
}

impl From<ToolResult> for CallResult {
    fn from(result: ToolResult) -> Self {
        Self {
            content: vec![Content::Text { text: result.text }],
            structured_content: result.structured,
            is_error: result.is_error,
            meta: None,
        }
    }
}

/// One content block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource embedded with its text.
    Resource {
        resource: EmbeddedText,
    },
}

impl Content {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// A text resource's contents, embedded in a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedText {
    pub uri: String,
    pub mime_type: String,
    pub text: String,
}

/// A round: what the client must ask or fetch before the call can go on, and the state its
/// retry brings back.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequired {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, InputRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl InputRequired {
    /// One request under `key`, with the sealed `state`.
    pub(crate) fn one(
        key: impl Into<String>,
        request: InputRequest,
        state: Option<String>,
    ) -> Self {
        Self {
            input_requests: BTreeMap::from([(key.into(), request)]),
            request_state: state,
        }
    }
}

/// One thing the client is asked for (the params of the request it stands for).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "method", content = "params")]
pub enum InputRequest {
    #[serde(rename = "elicitation/create")]
    Elicit(Elicitation),
    /// `sampling/createMessage` with these params (deprecated; the conformance suite asks).
    #[serde(rename = "sampling/createMessage")]
    Sample(Value),
    /// `roots/list` (deprecated; the conformance suite asks).
    #[serde(rename = "roots/list")]
    ListRoots(Map<String, Value>),
}

/// An elicitation: a link for the person to open, or a form for them to fill in.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum Elicitation {
    Url {
        message: String,
        url: String,
    },
    Form {
        message: String,
        #[serde(rename = "requestedSchema")]
        requested_schema: Value,
    },
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_are_written_as_the_spec_writes_them() {
        let complete: CallAnswer = ToolResult::structured(json!({"invoices": []})).into();
        assert_eq!(
            serde_json::to_value(&complete).unwrap(),
            json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": "{\"invoices\":[]}"}],
                "structuredContent": {"invoices": []},
                "isError": false,
            })
        );
        let url = Elicitation::Url {
            message: "m".into(),
            url: "https://g/connect/t".into(),
        };
        let round = CallAnswer::InputRequired(InputRequired::one(
            "connect_demo",
            InputRequest::Elicit(url),
            Some("g1.s".into()),
        ));
        assert_eq!(
            serde_json::to_value(&round).unwrap(),
            json!({
                "resultType": "input_required",
                "inputRequests": {"connect_demo": {"method": "elicitation/create",
                    "params": {"mode": "url", "message": "m", "url": "https://g/connect/t"}}},
                "requestState": "g1.s",
            })
        );
    }
}
