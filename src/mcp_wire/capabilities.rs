//! What the client declared it can do: per request in the modern era (`_meta`), once at
//! `initialize` in a legacy-era session. Read once per request into [`Capabilities`]; nothing
//! below the edge looks at the JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::identity::Presence;
use crate::mcp_wire::describe::{APP_MIME, APPS_EXTENSION, TASKS_EXTENSION};

/// The capabilities grantry acts on, as a client declared them (kept with a task, whose steps
/// run as the call that made it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// `elicitation.url`: the client shows a URL-mode elicitation's link.
    pub(crate) url_elicitation: bool,
    /// `elicitation.form`, or an `elicitation` object naming no mode at all (the spec reads
    /// that as form mode): the client asks its person a form's questions.
    pub(crate) form_elicitation: bool,
    /// `elicitation`, in any mode.
    pub elicitation: bool,
    /// `sampling` (deprecated; the conformance suite's fixtures ask for it).
    pub sampling: bool,
    /// `roots` (deprecated; the conformance suite's fixtures ask for it).
    pub(crate) roots: bool,
    /// The MCP Apps extension with HTML apps (`io.modelcontextprotocol/ui`, its `mimeTypes`
    /// naming `text/html;profile=mcp-app`): the host renders grantry's connect card.
    pub(crate) apps: bool,
    /// The Tasks extension (`io.modelcontextprotocol/tasks`, an empty object: it has no
    /// settings yet): the client takes a task for an answer and polls it.
    pub(crate) tasks: bool,
    /// Not the client's to declare: the caller's token has no person behind it, so nothing
    /// may be asked of anyone ([`Capabilities::for_presence`]).
    pub(crate) no_person: bool,
}

impl Capabilities {
    /// Whether a sign-in is asked as a round: the client shows its link, or it is a card host
    /// that takes tasks (the round becomes a task that waits on the card, never shown to it).
    pub(crate) fn takes_sign_in_round(&self) -> bool {
        self.url_elicitation || (self.apps && self.tasks)
    }

    /// From the members declared: whether `elicitation` is there, and its modes.
    pub(crate) fn new(elicitation: Option<(bool, bool)>, sampling: bool, roots: bool) -> Self {
        let (form, url) = elicitation.unwrap_or_default();
        let names_no_mode = !form && !url;
        Self {
            url_elicitation: url,
            form_elicitation: form || (elicitation.is_some() && names_no_mode),
            elicitation: elicitation.is_some(),
            sampling,
            roots,
            apps: false,
            tasks: false,
            no_person: false,
        }
    }

    /// What the client can do for a caller with this `presence`: for a token with no person
    /// behind it, nothing that reaches a person (no elicitation in either mode, no card).
    pub(crate) fn for_presence(self, presence: Presence) -> Self {
        match presence {
            Presence::Person => self,
            Presence::NoPerson => Self {
                url_elicitation: false,
                form_elicitation: false,
                elicitation: false,
                apps: false,
                no_person: true,
                ..self
            },
        }
    }

    /// Reads a `clientCapabilities` object, as strictly as its schema types it (every
    /// member it names of its type); `None` when it is not one.
    pub(crate) fn read(declared: &str) -> Option<Self> {
        let declared: Declared = serde_json::from_str(declared).ok()?;
        let elicitation = declared
            .elicitation
            .map(|e| (e.form.is_some(), e.url.is_some()));
        let apps = declared.extensions.as_ref().is_some_and(renders_apps);
        let tasks = declared.extensions.as_ref().is_some_and(takes_tasks);
        Some(Self {
            apps,
            tasks,
            ..Self::new(
                elicitation,
                declared.sampling.is_some(),
                declared.roots.is_some(),
            )
        })
    }
}

/// Whether the extensions declared hold MCP Apps with HTML apps. An extension's settings are
/// the extension's own to type: anything else there is no declaration of it.
fn renders_apps(extensions: &BTreeMap<String, Map<String, Value>>) -> bool {
    extensions
        .get(APPS_EXTENSION)
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t == APP_MIME))
}

/// Whether the extensions declared hold the Tasks extension (its settings an object, which
/// the schema's `Record<string, never>` leaves empty).
fn takes_tasks(extensions: &BTreeMap<String, Map<String, Value>>) -> bool {
    extensions.contains_key(TASKS_EXTENSION)
}

/// `ClientCapabilities` as the schema types it; members grantry does not read are checked
/// for their type and otherwise ignored.
#[derive(Deserialize)]
struct Declared {
    #[serde(default, rename = "experimental")]
    _experimental: Option<BTreeMap<String, Map<String, Value>>>,
    #[serde(default)]
    extensions: Option<BTreeMap<String, Map<String, Value>>>,
    #[serde(default)]
    roots: Option<Roots>,
    #[serde(default)]
    sampling: Option<Sampling>,
    #[serde(default)]
    elicitation: Option<DeclaredElicitation>,
}

#[derive(Deserialize)]
struct Roots {
    #[serde(default, rename = "listChanged")]
    _list_changed: Option<bool>,
}

#[derive(Deserialize)]
struct Sampling {
    #[serde(default, rename = "tools")]
    _tools: Option<Map<String, Value>>,
    #[serde(default, rename = "context")]
    _context: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct DeclaredElicitation {
    #[serde(default)]
    form: Option<FormMode>,
    #[serde(default)]
    url: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct FormMode {
    #[serde(default, rename = "schemaValidation")]
    _schema_validation: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(declared: &str) -> Option<Capabilities> {
        Capabilities::read(declared)
    }

    #[test]
    fn elicitation_modes_are_read_as_the_spec_writes_them() {
        let both = read(r#"{"elicitation": {"url": {}, "form": {}}}"#).unwrap();
        assert!(both.url_elicitation && both.form_elicitation && both.elicitation);
        let no_mode = read(r#"{"elicitation": {}}"#).unwrap();
        assert!(
            no_mode.form_elicitation && !no_mode.url_elicitation,
            "an elicitation naming no mode is form mode"
        );
        let url = read(r#"{"elicitation": {"url": {}}}"#).unwrap();
        assert!(
            url.url_elicitation && !url.form_elicitation,
            "naming url alone declares no form"
        );
        let sampling = read(r#"{"sampling": {}}"#).unwrap();
        assert!(sampling.sampling && !sampling.elicitation);
        assert_eq!(read("{}"), Some(Capabilities::default()));
        assert_eq!(
            read(r#"{"elicitation": null}"#),
            Some(Capabilities::default())
        );
    }

    #[test]
    fn apps_are_declared_by_the_ui_extension_naming_the_app_mime_type() {
        let apps = read(
            r#"{"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}"#,
        )
        .unwrap();
        assert!(apps.apps && !apps.elicitation);
        for not_apps in [
            r#"{"extensions": {"io.modelcontextprotocol/ui": {}}}"#,
            r#"{"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}"#,
            r#"{"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": "text/html;profile=mcp-app"}}}"#,
            r#"{"extensions": {"io.modelcontextprotocol/tasks": {"mimeTypes": ["text/html;profile=mcp-app"]}}}"#,
        ] {
            assert!(!read(not_apps).unwrap().apps, "{not_apps}");
        }
    }

    #[test]
    fn tasks_are_declared_by_the_extension_alone() {
        let tasks = read(r#"{"extensions": {"io.modelcontextprotocol/tasks": {}}}"#).unwrap();
        assert!(tasks.tasks && !tasks.apps && !tasks.elicitation);
        for not_tasks in [
            r#"{}"#,
            r#"{"extensions": {}}"#,
            r#"{"extensions": {"io.modelcontextprotocol/ui": {}}}"#,
            r#"{"experimental": {"io.modelcontextprotocol/tasks": {}}}"#,
        ] {
            assert!(!read(not_tasks).unwrap().tasks, "{not_tasks}");
        }
        assert_eq!(
            read(r#"{"extensions": {"io.modelcontextprotocol/tasks": true}}"#),
            None,
            "settings that are no object are no declaration"
        );
    }

    #[test]
    fn a_member_of_the_wrong_type_is_no_declaration() {
        for refused in [
            r#"{"elicitation": 5}"#,
            r#"{"elicitation": {"url": true}}"#,
            r#"{"elicitation": {"form": {"schemaValidation": "yes"}}}"#,
            r#"{"experimental": {"x": 1}}"#,
            "\"x\"",
        ] {
            assert_eq!(read(refused), None, "{refused}");
        }
        assert!(
            read(r#"{"elicitation": {"url": {}}, "somethingNew": 1}"#).is_some(),
            "members the schema does not name are ignored"
        );
        // As rmcp read it: a struct's fields may come as an array (none given here).
        assert!(read(r#"{"sampling": []}"#).is_some_and(|c| c.sampling));
        assert_eq!(read("[]"), Some(Capabilities::default()));
    }

    #[test]
    fn a_caller_with_no_person_is_asked_nothing_whatever_the_client_declared() {
        let all = read(
            r#"{"elicitation": {"url": {}, "form": {}}, "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}"#,
        )
        .unwrap();
        assert_eq!(all.for_presence(Presence::Person), all);
        let nobody = all.for_presence(Presence::NoPerson);
        assert!(nobody.no_person);
        assert!(!nobody.url_elicitation && !nobody.form_elicitation && !nobody.elicitation);
        assert!(!nobody.apps);
    }
}
