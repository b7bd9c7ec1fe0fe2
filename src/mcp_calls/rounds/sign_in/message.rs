//! What the person is asked in a sign-in round: to connect, to grant write access, or to
//! reconnect and why.
//!
//! Formatting a message (Fluent) was a twentieth of an `input_required` round's work, and
//! the common two depend only on the language, the deployment's brand and the provider's
//! name: each is formatted once and kept. The memo is bounded by what keys it: the
//! languages, the brands a process was given, and the catalog's names (a provider outside
//! it is named "billing").

use std::sync::{Arc, RwLock};

use crate::access::Access;
use crate::grants::ReauthReason;
use crate::ids::ProviderId;
use crate::mcp_calls::rounds::Rounds;
use crate::ui::Lang;

use super::display_name;

/// What the person is asked: to connect, to reconnect and why, or to grant write access.
pub(super) fn connect_message(
    rounds: &Rounds<'_>,
    provider: &ProviderId,
    access: Access,
    reason: Option<ReauthReason>,
) -> String {
    let name = display_name(rounds, provider);
    let (lang, brand) = (rounds.tools.language, rounds.tools.brand);
    let ask = match reason {
        Some(why) => {
            let why = why.explained(lang, brand, name);
            return composed(lang, "mcp-reconnect", &[("provider", name), ("why", &why)]);
        }
        None if access.writes_at_provider() => Ask::GrantWrite,
        None => Ask::Connect,
    };
    asked(lang, ask, name, brand)
}

/// The ask to connect (or to grant write access) at the provider `name`, formatted the first
/// time and kept.
fn asked(lang: Lang, ask: Ask, name: &str, brand: &str) -> String {
    let kept =
        |k: &&Kept| k.lang == lang && k.ask == ask && k.provider_name == name && k.brand == brand;
    let known = KEPT
        .read()
        .ok()
        .and_then(|all| all.iter().find(kept).map(|k| k.text.clone()));
    if let Some(known) = known {
        return known.to_string();
    }
    let text: Arc<str> = composed(lang, ask.key(), &[("provider", name), ("brand", brand)]).into();
    if let Ok(mut all) = KEPT.write()
        // Another call may have kept it since the read.
        && !all.iter().any(|k| kept(&k))
    {
        all.push(Kept {
            lang,
            ask,
            provider_name: name.to_owned(),
            brand: brand.to_owned(),
            text: text.clone(),
        });
    }
    text.to_string()
}

/// The message `key` and, after it, the ask to open the link.
fn composed(lang: Lang, key: &str, args: &[(&'static str, &str)]) -> String {
    format!("{} {}", lang.t_with(key, args), lang.t("mcp-open-link"))
}

/// The messages formatted so far: a few dozen at most, so a list (a lookup compares two
/// enums before any text).
static KEPT: RwLock<Vec<Kept>> = RwLock::new(Vec::new());

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Connect,
    GrantWrite,
}

impl Ask {
    fn key(self) -> &'static str {
        match self {
            Self::Connect => "mcp-connect",
            Self::GrantWrite => "mcp-grant-write",
        }
    }
}

/// A message formatted once, and everything it depends on.
struct Kept {
    lang: Lang,
    ask: Ask,
    provider_name: String,
    brand: String,
    text: Arc<str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept message is the one formatting gives, and only for what it was formatted for:
    /// another brand, provider, language or ask gets its own.
    #[test]
    fn a_kept_ask_is_the_formatted_one_for_exactly_its_inputs() {
        let fresh = |lang, ask: Ask, name, brand| {
            composed(lang, ask.key(), &[("provider", name), ("brand", brand)])
        };
        let cases = [
            (Lang::En, Ask::Connect, "Xero", "Acme Connect"),
            (Lang::En, Ask::Connect, "Xero", "Other Brand"),
            (Lang::En, Ask::Connect, "Stripe", "Acme Connect"),
            (Lang::En, Ask::GrantWrite, "Xero", "Acme Connect"),
            (Lang::De, Ask::Connect, "Xero", "Acme Connect"),
        ];
        for _ in 0..2 {
            for (lang, ask, name, brand) in cases {
                assert_eq!(asked(lang, ask, name, brand), fresh(lang, ask, name, brand));
            }
        }
        let texts: std::collections::HashSet<String> = cases
            .iter()
            .map(|&(l, a, n, b)| asked(l, a, n, b))
            .collect();
        assert_eq!(
            texts.len(),
            cases.len(),
            "each case its own message: {texts:#?}"
        );
    }
}
