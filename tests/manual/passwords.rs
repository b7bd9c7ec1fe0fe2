//! Every database password the manual makes (and docker-compose.yml's recipe) fits in the
//! store URL built from it: made many times, each must come back out of the URL intact.

use std::process::Command;

use super::blocks::shell;
use super::root;

/// Each `NAME=$(…)` of a text whose NAME holds PASSWORD: the name and the command.
pub(crate) fn password_makers(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("$(") {
        let before = text[..at].trim_end_matches('"');
        let Some(before) = before.strip_suffix('=') else {
            continue;
        };
        let name: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<char>>()
            .into_iter()
            .rev()
            .collect();
        let rest = &text[at + 2..];
        let (mut depth, mut end) = (1, None);
        for (i, c) in rest.char_indices() {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            if depth == 0 {
                end = Some(i);
                break;
            }
        }
        if name.contains("PASSWORD") {
            found.push((name, rest[..end.unwrap()].to_owned()));
        }
    }
    found
}

/// The `postgres://` URLs of a text that use the variable `name`, with `\u{1}` for it.
pub(crate) fn url_templates(text: &str, name: &str) -> Vec<String> {
    let mut text = text.to_owned();
    while let Some(at) = text.find(&format!("${{{name}")) {
        let end = at + text[at..].find('}').unwrap();
        text.replace_range(at..=end, "\u{1}");
    }
    let text = text.replace(&format!("${name}"), "\u{1}");
    text.match_indices("postgres://")
        .map(|(at, _)| {
            text[at..]
                .split(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                .next()
                .unwrap()
                .to_owned()
        })
        .filter(|url| url.contains('\u{1}'))
        .collect()
}

#[test]
fn every_database_password_the_manual_makes_fits_in_its_url() {
    let compose = std::fs::read_to_string(root().join("docker-compose.yml")).unwrap();
    let mut sources: Vec<(String, String)> =
        shell().into_iter().map(|b| (b.place(), b.text)).collect();
    sources.push(("docker-compose.yml".to_owned(), compose.clone()));
    let mut checked = 0;
    for (place, text) in sources {
        for (name, maker) in password_makers(&text) {
            let mut templates = url_templates(&text, &name);
            templates.extend(url_templates(&compose, &name));
            assert!(
                !templates.is_empty(),
                "{place}: no postgres:// URL uses {name}"
            );
            let made = Command::new("bash")
                .args(["-c", &format!("for _ in $(seq 100); do {maker}; done")])
                .output()
                .unwrap();
            assert!(made.status.success(), "{place}: `{maker}`: {made:?}");
            let values: Vec<&str> = std::str::from_utf8(&made.stdout).unwrap().lines().collect();
            assert_eq!(values.len(), 100, "{place}: `{maker}` makes one line");
            for template in &templates {
                let plain = url::Url::parse(&template.replace('\u{1}', "x")).unwrap();
                for value in &values {
                    let url = template.replace('\u{1}', value);
                    let parsed = url::Url::parse(&url).ok();
                    let same = parsed.as_ref().is_some_and(|u| {
                        u.password() == Some(value)
                            && (u.host_str(), u.port(), u.path())
                                == (plain.host_str(), plain.port(), plain.path())
                    });
                    assert!(
                        same,
                        "{place}: `{maker}` made {value:?}, which breaks {template:?}: {parsed:?}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 2, "only {checked} password recipes found");
}
