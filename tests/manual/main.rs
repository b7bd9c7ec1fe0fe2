//! The README and the manual under `docs/` read as a book: the README stays a front door
//! (under 15 KB) that links the contents, `docs/SUMMARY.md` lists every page of the manual
//! once, in its four parts, and each page links to the one before and after it ([`book`]);
//! every page's headings nest in order, every relative link and anchor leads somewhere, and
//! every shell block it shows runs here as written ([`recipes`]) or is marked with why it
//! cannot ([`blocks`]; the grantry commands of those still parse, [`commands`]).

// Test scaffolding, not product: an unwrap that fails is the run's failure.
#![allow(clippy::unwrap_used, unreachable_pub)]

mod blocks;
mod book;
mod commands;
mod passwords;
mod recipes;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page under docs/ (its folders too), relative to the root.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let mut folders = vec![root().join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path.strip_prefix(root()).unwrap().to_owned());
            }
        }
    }
    pages.sort();
    pages
}

/// The lines of a page outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut in_code = false;
    text.lines()
        .filter(|line| {
            if line.starts_with("```") {
                in_code = !in_code;
                return false;
            }
            !in_code
        })
        .collect()
}

/// A page's headings as (level, text).
fn headings(text: &str) -> Vec<(usize, String)> {
    prose(text)
        .into_iter()
        .filter_map(|line| {
            let level = line.chars().take_while(|c| *c == '#').count();
            let title = line.get(level..)?.strip_prefix(' ')?;
            (level > 0).then(|| (level, title.to_owned()))
        })
        .collect()
}

/// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor(title: &str) -> String {
    title
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The targets of a page's inline links, `[text](target)`.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    found
}

fn read(page: &Path) -> String {
    std::fs::read_to_string(root().join(page)).unwrap()
}

#[test]
fn the_readme_is_a_front_door() {
    let size = read(Path::new("README.md")).len();
    assert!(
        size < 15 * 1024,
        "README.md is {size} bytes; the manual belongs under docs/"
    );
}

#[test]
fn every_page_has_one_title_and_headings_nested_in_order() {
    for page in pages() {
        let found = headings(&read(&page));
        assert_eq!(
            found.first().map(|h| h.0),
            Some(1),
            "{page:?} starts with a # title"
        );
        let titles = found.iter().filter(|h| h.0 == 1).count();
        assert_eq!(titles, 1, "{page:?} has one # title");
        for pair in found.windows(2) {
            let ((above, _), (level, title)) = (&pair[0], &pair[1]);
            assert!(level <= &(above + 1), "{page:?}: \"{title}\" skips a level");
        }
    }
}

#[test]
fn every_relative_link_and_anchor_leads_somewhere() {
    let anchors: BTreeMap<PathBuf, BTreeSet<String>> = pages()
        .into_iter()
        .map(|page| {
            let found = headings(&read(&page))
                .iter()
                .map(|h| anchor(&h.1))
                .collect();
            (page, found)
        })
        .collect();
    let mut broken = Vec::new();
    for page in anchors.keys() {
        for link in links(&read(page)) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                normalize(&page.parent().unwrap().join(path))
            };
            let exists = root().join(&target).exists();
            let anchored =
                fragment.is_empty() || anchors.get(&target).is_none_or(|a| a.contains(fragment));
            if !exists || !anchored {
                broken.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links that lead nowhere: {broken:#?}");
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(
        anchor("Use grantry from your client: `grantry bridge`"),
        "use-grantry-from-your-client-grantry-bridge"
    );
    assert_eq!(
        anchor("The person's pages: `/connections`"),
        "the-persons-pages-connections"
    );
}
