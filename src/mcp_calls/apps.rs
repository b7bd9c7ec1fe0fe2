//! MCP Apps (`io.modelcontextprotocol/ui`): the connect card, for hosts that render apps but
//! show no URL elicitation (claude.ai, ChatGPT and other web hosts).
//!
//! grantry declares the extension and a `resources` capability in discovery and `initialize`,
//! and serves one static `ui://` resource: the card, rendered once at start in every language
//! grantry speaks under the deployment's brand (the same bytes for everyone; no person's data
//! is in it). The tool `connect_account` is bound to it; the host renders it with that tool's
//! result, which carries the connect link in `_meta` (`rounds::card` writes it). The card
//! opens the link through the host (`ui/open-link`), shows it as text where the host cannot,
//! polls the app-only tool `connection_status` until a connection lands, and lets the person
//! go on (`ui/message`). It needs no network: its CSP lists no domain. Nothing secret reaches it:
//! the link is the sealed connect ticket, useless to anyone but its person.

use askama::Template;
use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::mcp_wire::describe::{APP_MIME, LIST_TTL_MS};
use crate::ui::Lang;

/// The card's resource.
pub(crate) const CARD_URI: &str = "ui://grantry/connect-card.html";
/// Where a card result carries its connect link (read by the card only).
pub(crate) const CONNECT_META: &str = "grantry/connect";

/// The card's words, by the key the card looks them up with, from the catalogs' `card-*`.
const WORDS: [(&str, &str); 19] = [
    ("connect_prompt", "card-connect-prompt"),
    ("connect_button", "card-connect-button"),
    ("reconnect_prompt", "card-reconnect-prompt"),
    ("reconnect_button", "card-reconnect-button"),
    ("connected", "card-connected"),
    ("connect_another", "card-connect-another"),
    ("needs_reauth", "card-needs-reauth"),
    ("use_account", "card-use-account"),
    ("use_message", "card-use-message"),
    ("waiting", "card-waiting"),
    ("open_yourself", "card-open-yourself"),
    ("expired", "card-expired"),
    ("done", "card-done"),
    ("continue", "card-continue"),
    ("continue_message", "card-continue-message"),
    ("sent", "card-sent"),
    ("failed", "card-failed"),
    ("cancelled", "card-cancelled"),
    ("unnamed", "card-unnamed"),
];

/// The placeholders the card fills in itself, as the catalogs name them.
const PLACEHOLDERS: [(&str, &str); 2] = [("provider", "{provider}"), ("account", "{account}")];

#[derive(Template)]
#[template(path = "connect_card.html")]
struct CardPage<'a> {
    default_lang: &'a str,
    brand_name: &'a str,
    accent: String,
    on_accent: String,
    logo: Option<String>,
    /// JSON, safe inside a `<script>` element.
    words: String,
    version: &'a str,
}

/// The resources grantry serves (the card alone), built once at start.
pub(crate) struct Resources {
    card: String,
    /// The resource's `_meta` as `resources/read` gives it.
    read_meta: Value,
}

impl Resources {
    pub(crate) fn new(config: &Config) -> Self {
        let brand = &config.brand;
        let (accent, on_accent) = match brand.color {
            Some(color) => (color.hex(), color.text_on().hex()),
            None => ("#2454d6".to_owned(), "#ffffff".to_owned()),
        };
        let logo = brand.logo.as_ref().map(|logo| {
            let data = base64::engine::general_purpose::STANDARD.encode(&logo.bytes);
            format!("data:{};base64,{data}", logo.content_type)
        });
        let page = CardPage {
            default_lang: config.default_language.tag(),
            brand_name: &brand.name,
            accent,
            on_accent,
            logo,
            words: script_json(&words()),
            version: env!("CARGO_PKG_VERSION"),
        };
        let card = page.render().expect("the card's template renders");
        // ChatGPT opens links to these domains without its "leaving" warning.
        let redirect_domains = [config.public_url.origin()];
        let read_meta = json!({
            "ui": card_ui_meta(),
            "openai/widgetCSP": {
                "connect_domains": [], "resource_domains": [], "redirect_domains": redirect_domains
            },
        });
        Self { card, read_meta }
    }

    /// `resources/list`'s entries.
    pub(crate) fn listed(&self) -> Value {
        json!([{
            "uri": CARD_URI,
            "name": "connect-card",
            "title": "Connect a billing account",
            "description": "A card with a button that opens the sign-in page for a billing provider.",
            "mimeType": APP_MIME,
            "_meta": {"ui": card_ui_meta()},
        }])
    }

    /// `resources/read`'s contents of `uri`, if grantry serves it.
    pub(crate) fn read(&self, uri: &str) -> Option<Value> {
        (uri == CARD_URI).then(|| {
            json!([{
                "uri": CARD_URI,
                "mimeType": APP_MIME,
                "text": self.card,
                "_meta": self.read_meta,
            }])
        })
    }

    /// The modern era's `resources/list` result.
    pub(crate) fn list_result(&self) -> Value {
        cacheable(json!({"resources": self.listed()}))
    }

    /// The modern era's `resources/read` result for `uri`.
    pub(crate) fn read_result(&self, uri: &str) -> Option<Value> {
        self.read(uri)
            .map(|contents| cacheable(json!({"contents": contents})))
    }

    /// The modern era's `resources/templates/list` result: none.
    pub(crate) fn templates_result() -> Value {
        cacheable(json!({"resourceTemplates": []}))
    }
}

/// What a host reads of the card: the strictest CSP (no domain at all: the card needs no
/// network) and a border.
fn card_ui_meta() -> Value {
    json!({
        "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []},
        "prefersBorder": true,
    })
}

/// A complete result its client may cache: the same for everyone.
fn cacheable(mut result: Value) -> Value {
    result["resultType"] = "complete".into();
    result["ttlMs"] = LIST_TTL_MS.into();
    result["cacheScope"] = "public".into();
    result
}

/// The card's words in every language, placeholders left for the card to fill.
fn words() -> Value {
    let languages: Map<String, Value> = Lang::ALL
        .into_iter()
        .map(|lang| {
            let said: Map<String, Value> = WORDS
                .iter()
                .map(|(name, key)| ((*name).to_owned(), lang.t_with(key, &PLACEHOLDERS).into()))
                .collect();
            (lang.tag().to_owned(), Value::Object(said))
        })
        .collect();
    Value::Object(languages)
}

/// JSON that cannot end the `<script>` element it is written into.
fn script_json(value: &Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The `_meta` of a tool `tools/list` shows, bound to the card: the standard key, the flat
/// key older hosts read, and ChatGPT's "the card may call tools".
pub(crate) fn card_tool_meta() -> Value {
    json!({
        "ui": {"resourceUri": CARD_URI, "visibility": ["model", "app"]},
        "ui/resourceUri": CARD_URI,
        "openai/widgetAccessible": true,
    })
}

/// The `_meta` of a tool only the card calls: hosts hide it from the model.
pub(crate) fn app_only_tool_meta() -> Value {
    json!({
        "ui": {"visibility": ["app"]},
        "openai/visibility": "private",
        "openai/widgetAccessible": true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_its_element() {
        let text = script_json(&json!({"x": "</script><b>&"}));
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["x"], "</script><b>&");
    }

    #[test]
    fn every_language_has_every_word_with_its_placeholders_left() {
        let words = words();
        for lang in Lang::ALL {
            for (name, _) in WORDS {
                let said = words[lang.tag()][name].as_str().unwrap();
                assert!(!said.is_empty(), "{} {name}", lang.tag());
                assert!(!said.contains('$'), "{} {name}: {said}", lang.tag());
            }
        }
        assert!(
            words["de"]["connect_button"]
                .as_str()
                .unwrap()
                .contains("{provider}")
        );
    }
}
