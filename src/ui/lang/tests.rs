use std::collections::{BTreeMap, BTreeSet};

use super::Lang;

/// Every message id of a catalog, with the `$variables` its text uses.
fn catalog(lang: Lang) -> BTreeMap<String, BTreeSet<String>> {
    let path = format!(
        "{}/locales/{}/grantry.ftl",
        env!("CARGO_MANIFEST_DIR"),
        lang.tag()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let mut messages = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let starts_message = line
            .split_once(" =")
            .filter(|(id, _)| id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
            .filter(|(id, _)| id.starts_with(|c: char| c.is_ascii_lowercase()));
        if let Some((id, _)) = starts_message {
            current = Some(id.to_owned());
            messages.insert(id.to_owned(), BTreeSet::new());
        } else if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(id) = &current {
            for variable in line.split("{ $").skip(1) {
                let name: String = variable
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                    .collect();
                messages.get_mut(id).unwrap().insert(name);
            }
        }
    }
    messages
}

#[test]
fn every_message_reads_in_every_language_and_never_as_its_key() {
    let english = catalog(Lang::En);
    assert!(english.len() > 20, "the English catalog is read");
    for lang in Lang::ALL {
        let own = catalog(lang);
        let stale: Vec<_> = own.keys().filter(|k| !english.contains_key(*k)).collect();
        assert!(
            stale.is_empty(),
            "{}: not in English: {stale:?}",
            lang.tag()
        );
        for (key, variables) in &english {
            let args: Vec<(&'static str, &str)> = variables
                .iter()
                .map(|v| (&*Box::leak(v.clone().into_boxed_str()), "X"))
                .collect();
            let text = lang.t_with(key, &args);
            assert!(!text.trim().is_empty(), "{}: {key} is empty", lang.tag());
            assert_ne!(&text, key, "{}: {key} reads as its key", lang.tag());
            assert!(!text.contains("{$"), "{}: {key}: {text}", lang.tag());
            match own.get(key) {
                // Translated: with the same arguments as English.
                Some(own_variables) => {
                    assert_eq!(own_variables, variables, "{}: {key}", lang.tag())
                }
                // Missing here: English, never the key.
                None => assert_eq!(text, Lang::En.t_with(key, &args), "{}: {key}", lang.tag()),
            }
        }
    }
}

#[test]
fn german_and_french_are_complete() {
    // The probe exists in English only, to test the fallback.
    let english = catalog(Lang::En);
    for lang in [Lang::De, Lang::Fr] {
        let own = catalog(lang);
        for (key, variables) in &english {
            if key.starts_with("lang-probe-") {
                continue;
            }
            assert!(own.contains_key(key), "{} lacks {key}", lang.tag());
            // Written and also loaded (a syntax error would drop it silently).
            let args: Vec<(&'static str, &str)> = variables
                .iter()
                .map(|v| (&*Box::leak(v.clone().into_boxed_str()), "X"))
                .collect();
            assert!(
                lang.own(key, &args).is_some(),
                "{}: {key} does not load",
                lang.tag()
            );
        }
    }
}

#[test]
fn a_missing_translation_falls_back_to_english() {
    // `lang-probe-english-only` exists only in the English catalog.
    let english = Lang::En.t("lang-probe-english-only");
    assert!(!english.is_empty());
    assert_eq!(Lang::De.own("lang-probe-english-only", &[]), None);
    assert_eq!(Lang::De.t("lang-probe-english-only"), english);
    assert_eq!(Lang::Fr.t("lang-probe-english-only"), english);
}

/// How catalog keys begin: a literal that begins so is taken for a key.
const PREFIXES: [&str; 10] = [
    "page-",
    "connect-",
    "connected-",
    "connections-",
    "disconnect-",
    "error-",
    "mcp-",
    "invoice-field-",
    "invoice-problem-",
    "reauth-",
];

#[test]
fn every_key_the_code_uses_is_in_english() {
    let english = catalog(Lang::En);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut used = BTreeSet::new();
    let mut files = vec![root.join("templates")];
    files.push(root.join("src"));
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        // Calls, and keys handed on as literals (a page's title and message keys).
        for call in [".t(\"", ".t_with(\"", "ui::t(\"", "ui::t_with(\"", "\""] {
            for rest in text.split(call).skip(1) {
                let key: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                let literal_key = call != "\"" || PREFIXES.iter().any(|p| key.starts_with(p));
                if literal_key && rest[key.len()..].starts_with('"') && !key.is_empty() {
                    used.insert(key);
                }
            }
        }
    }
    assert!(used.len() > 20, "keys are found in the code: {used:?}");
    let missing: Vec<_> = used.iter().filter(|k| !english.contains_key(*k)).collect();
    assert!(missing.is_empty(), "used but not in English: {missing:?}");
}

#[test]
fn the_browser_chooses_among_the_languages_grantry_speaks() {
    let best = Lang::from_accept_language;
    assert_eq!(best("de-DE,de;q=0.9,en;q=0.8"), Some(Lang::De));
    assert_eq!(best("fr-CA"), Some(Lang::Fr));
    assert_eq!(best("en;q=0.1, fr;q=0.9"), Some(Lang::Fr));
    assert_eq!(best("es, it;q=0.8, de;q=0.5"), Some(Lang::De));
    assert_eq!(best("es, it"), None);
    assert_eq!(best("de;q=0, *"), None);
    assert_eq!(best(""), None);
    assert_eq!(Lang::parse("FR"), Some(Lang::Fr));
    assert_eq!(Lang::parse("pt-BR"), None);
}
