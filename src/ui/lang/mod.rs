//! The languages grantry speaks, and its words in each: Fluent message catalogs under
//! `locales/{language}/grantry.ftl`, compiled in. English is complete; another catalog may
//! lack a message, which then reads in English (never as its key).
//!
//! Pages take the reader's language from the browser's `Accept-Language`; MCP messages take
//! the deployment's `--default-language` (the protocol carries no locale).

use std::borrow::Cow;
use std::collections::HashMap;

use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::{LanguageIdentifier, Loader as _, langid};

fluent_templates::static_loader! {
    static CATALOGS = {
        locales: "./locales",
        fallback_language: "en",
        // No Unicode isolation marks around arguments: the texts go into HTML and JSON.
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// A language grantry has a catalog for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) enum Lang {
    #[default]
    En,
    De,
    Fr,
}

impl Lang {
    pub(crate) const ALL: [Lang; 3] = [Lang::En, Lang::De, Lang::Fr];

    /// Its BCP 47 tag, as `<html lang>` and `--default-language` write it.
    pub(crate) fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
            Lang::Fr => "fr",
        }
    }

    fn id(self) -> LanguageIdentifier {
        match self {
            Lang::En => langid!("en"),
            Lang::De => langid!("de"),
            Lang::Fr => langid!("fr"),
        }
    }

    /// The language a tag names (`de`, `fr-CA`, `EN`), if grantry speaks it.
    pub(crate) fn parse(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        Lang::ALL.into_iter().find(|l| l.tag() == primary)
    }

    /// The first language of an `Accept-Language` header (by weight) that grantry speaks.
    pub(crate) fn from_accept_language(header: &str) -> Option<Lang> {
        let mut wanted: Vec<(f32, usize, &str)> = header
            .split(',')
            .enumerate()
            .filter_map(|(i, item)| {
                let mut parts = item.split(';');
                let tag = parts.next()?.trim();
                let weight = parts
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())?;
                (weight > 0.0 && !tag.is_empty()).then_some((weight, i, tag))
            })
            .collect();
        // Heaviest first; equal weights keep the header's order.
        wanted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        wanted.into_iter().find_map(|(_, _, tag)| Lang::parse(tag))
    }

    /// The message `key`, with no arguments.
    pub(crate) fn t(self, key: &str) -> String {
        self.t_with(key, &[])
    }

    /// The message `key` with its arguments (`$name` in the catalog), in this language, else
    /// in English.
    pub(crate) fn t_with(self, key: &str, args: &[(&'static str, &str)]) -> String {
        let args = fluent_args(args);
        let args = (!args.is_empty()).then_some(&args);
        match CATALOGS.try_lookup_complete(&self.id(), key, args) {
            Some(text) => text,
            None => {
                // A key used in the code but missing from English: a bug the catalog test
                // catches; a reader sees nothing rather than the key.
                tracing::error!(key, "no message for this key in any catalog");
                String::new()
            }
        }
    }

    /// The message `key` in this language's own catalog only (no English fallback): what the
    /// tests check each catalog by.
    #[cfg(test)]
    pub(crate) fn own(self, key: &str, args: &[(&'static str, &str)]) -> Option<String> {
        CATALOGS.lookup_no_default_fallback(&self.id(), key, Some(&fluent_args(args)))
    }
}

fn fluent_args<'a>(
    args: &[(&'static str, &'a str)],
) -> HashMap<Cow<'static, str>, FluentValue<'a>> {
    args.iter()
        .map(|(name, value)| (Cow::Borrowed(*name), FluentValue::from(*value)))
        .collect()
}

#[cfg(test)]
mod tests;
