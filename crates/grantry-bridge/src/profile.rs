//! What the client speaks and can answer: its era (the `initialize` handshake, or 2026-07-28's
//! per-request `_meta`) and the elicitation modes it declared.

use serde_json::{Value, json};

/// The 2026-07-28 revision, spoken to the server.
pub(super) const MODERN: &str = "2026-07-28";
/// The handshake-era revisions the bridge answers `initialize` with, newest first.
const HANDSHAKE_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The first revision with URL-mode elicitation.
const URL_MODE_SINCE: &str = "2025-11-25";

pub(super) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(super) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(super) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    /// `initialize` and a revision before 2026-07-28: results lose `resultType`, questions go
    /// to the client as `elicitation/create` requests.
    Handshake,
    /// 2026-07-28 over stdio: `input_required` results go to the client as they are.
    Modern,
}

#[derive(Debug, Clone)]
pub(super) struct ClientProfile {
    pub(super) era: Era,
    /// Form-mode elicitation declared (`elicitation: {}` means form).
    pub(super) form: bool,
    /// URL-mode elicitation declared.
    pub(super) url: bool,
    pub(super) info: Value,
}

impl ClientProfile {
    /// A client that has said nothing: no questions can be asked of it.
    pub(super) fn unknown() -> Self {
        Self {
            era: Era::Handshake,
            form: false,
            url: false,
            info: Value::Null,
        }
    }

    /// The client of an `initialize` request, and the revision to answer it with.
    pub(super) fn from_initialize(params: &Value) -> (Self, &'static str) {
        let asked = params["protocolVersion"].as_str().unwrap_or_default();
        let version = HANDSHAKE_VERSIONS
            .into_iter()
            .find(|known| *known == asked)
            .unwrap_or(HANDSHAKE_VERSIONS[0]);
        let (form, url) = elicitation_modes(&params["capabilities"]);
        let profile = Self {
            era: Era::Handshake,
            form,
            url: url && version >= URL_MODE_SINCE,
            info: params["clientInfo"].clone(),
        };
        (profile, version)
    }

    /// The client of a 2026-07-28 request, from its `_meta`.
    pub(super) fn from_meta(meta: &Value) -> Self {
        let (form, url) = elicitation_modes(&meta[META_CAPABILITIES]);
        Self {
            era: Era::Modern,
            form,
            url,
            info: meta[META_CLIENT_INFO].clone(),
        }
    }

    /// What the bridge declares to the server for this client: URL elicitation always (the
    /// bridge opens links itself when the client cannot), form only if the client can answer.
    pub(super) fn upstream_capabilities(&self) -> Value {
        let mut elicitation = json!({"url": {}});
        if self.form {
            elicitation["form"] = json!({});
        }
        json!({"elicitation": elicitation})
    }
}

/// Whether a request's `_meta` says 2026-07-28.
pub(super) fn is_modern(params: &Value) -> bool {
    params["_meta"][META_VERSION].as_str() == Some(MODERN)
}

/// (form, url) from a `capabilities` object: `elicitation: {}` is form only.
fn elicitation_modes(capabilities: &Value) -> (bool, bool) {
    match capabilities.get("elicitation") {
        Some(Value::Object(modes)) if modes.is_empty() => (true, false),
        Some(Value::Object(modes)) => (modes.contains_key("form"), modes.contains_key("url")),
        _ => (false, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_elicitation_capability_means_form_only() {
        let (form_only, version) = ClientProfile::from_initialize(&json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}},
        }));
        assert_eq!(version, "2025-06-18");
        assert!(form_only.form && !form_only.url);

        let (both, _) = ClientProfile::from_initialize(&json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
        }));
        assert!(both.form && both.url);

        let (none, version) =
            ClientProfile::from_initialize(&json!({"protocolVersion": "1999-01-01"}));
        assert_eq!(version, "2025-11-25");
        assert!(!none.form && !none.url);
    }

    #[test]
    fn url_mode_needs_a_revision_that_has_it() {
        let (old, _) = ClientProfile::from_initialize(&json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {"url": {}}},
        }));
        assert!(!old.url);
    }

    #[test]
    fn the_server_hears_url_always_and_form_only_when_the_client_can_answer() {
        let mut profile = ClientProfile::unknown();
        assert_eq!(
            profile.upstream_capabilities(),
            json!({"elicitation": {"url": {}}})
        );
        profile.form = true;
        assert_eq!(
            profile.upstream_capabilities(),
            json!({"elicitation": {"url": {}, "form": {}}})
        );
    }
}
