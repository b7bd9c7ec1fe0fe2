//! What the client declared it can do: per request in the modern era (`_meta`), once at
//! `initialize` in a legacy-era session. Read once per request into [`Capabilities`]; nothing
//! below the edge looks at the JSON.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::Value;

/// The capabilities grantry acts on, as a client declared them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Capabilities {
    /// `elicitation.url`: the client shows a URL-mode elicitation's link.
    pub url_elicitation: bool,
    /// `elicitation.form`, or an `elicitation` object naming no mode at all (the spec reads
    /// that as form mode): the client asks its person a form's questions.
    pub form_elicitation: bool,
}

impl Capabilities {
    /// Reads a `clientCapabilities` object; anything else declares nothing.
    pub(super) fn read(declared: &Value) -> Self {
        let elicitation = &declared["elicitation"];
        let names_no_mode = elicitation.get("form").is_none() && elicitation.get("url").is_none();
        Self {
            url_elicitation: elicitation["url"].is_object(),
            form_elicitation: elicitation["form"].is_object()
                || (elicitation.is_object() && names_no_mode),
        }
    }

    /// The capabilities of this request (in a legacy-era session, those its `initialize`
    /// declared).
    pub(super) fn of(ctx: &RequestContext<RoleServer>) -> Self {
        Self::read(&client_capabilities(ctx))
    }
}

/// The raw `clientCapabilities` of this request; in a legacy-era session, those its
/// `initialize` declared.
pub(super) fn client_capabilities(ctx: &RequestContext<RoleServer>) -> Value {
    match ctx
        .meta
        .0
        .0
        .get("io.modelcontextprotocol/clientCapabilities")
    {
        Some(capabilities) => capabilities.clone(),
        None => ctx
            .client_capabilities()
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn elicitation_modes_are_read_as_the_spec_writes_them() {
        let read = |declared: Value| Capabilities::read(&declared);
        let (url, form) = (true, true);
        let both = Capabilities {
            url_elicitation: url,
            form_elicitation: form,
        };
        assert_eq!(read(json!({"elicitation": {"url": {}, "form": {}}})), both);
        assert_eq!(
            read(json!({"elicitation": {}})),
            Capabilities {
                form_elicitation: true,
                ..Capabilities::default()
            },
            "an elicitation naming no mode is form mode"
        );
        assert_eq!(
            read(json!({"elicitation": {"url": {}}})),
            Capabilities {
                url_elicitation: true,
                ..Capabilities::default()
            },
            "naming url alone declares no form"
        );
        assert_eq!(read(json!({"sampling": {}})), Capabilities::default());
        assert_eq!(read(Value::Null), Capabilities::default());
        assert_eq!(
            read(json!({"elicitation": {"url": true}})),
            Capabilities::default()
        );
    }
}
