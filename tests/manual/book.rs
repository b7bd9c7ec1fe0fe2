//! The manual as a book: `docs/SUMMARY.md` is its contents, in four parts (use, run, operate,
//! develop), listing every page under `docs/` once; the README links it; each page ends with
//! a line linking the page before it, the contents and the page after it, in that order.

use std::path::{Path, PathBuf};

use super::{links, normalize, pages, prose, read};

const SUMMARY: &str = "docs/SUMMARY.md";
const PARTS: [&str; 4] = ["Use", "Run", "Operate", "Develop"];

/// One entry of the contents: its title and its page, relative to the root.
struct Entry {
    title: String,
    page: PathBuf,
}

/// The contents' parts, in order, and their entries (`- [Title](page)` lines) in order.
fn contents() -> (Vec<String>, Vec<Entry>) {
    let text = read(Path::new(SUMMARY));
    let (mut parts, mut entries) = (Vec::new(), Vec::new());
    for line in prose(&text) {
        if let Some(part) = line.strip_prefix("## ") {
            parts.push(part.to_owned());
        }
        let Some(item) = line.strip_prefix("- [") else {
            continue;
        };
        let (title, rest) = item.split_once("](").unwrap();
        let (target, _) = rest.split_once(')').unwrap();
        entries.push(Entry {
            title: title.to_owned(),
            page: normalize(&Path::new("docs").join(target)),
        });
    }
    (parts, entries)
}

/// `to` as a link from the page `from` (both relative to the root): `../security.md` from
/// `docs/development/architecture.md`.
fn relative(from: &Path, to: &Path) -> String {
    let here: Vec<_> = from.parent().unwrap().components().collect();
    let there: Vec<_> = to.components().collect();
    let shared = here.iter().zip(&there).take_while(|(a, b)| a == b).count();
    let mut link = PathBuf::new();
    for _ in shared..here.len() {
        link.push("..");
    }
    for part in &there[shared..] {
        link.push(part);
    }
    link.display().to_string()
}

/// The line that must end `entries[at]`'s page.
fn navigation(entries: &[Entry], at: usize) -> String {
    let page = &entries[at].page;
    let mut parts = Vec::new();
    if let Some(before) = at.checked_sub(1).map(|i| &entries[i]) {
        let link = relative(page, &before.page);
        parts.push(format!("[← {}]({})", before.title, link));
    }
    parts.push(format!(
        "[Contents]({})",
        relative(page, Path::new(SUMMARY))
    ));
    if let Some(after) = entries.get(at + 1) {
        let link = relative(page, &after.page);
        parts.push(format!("[{} →]({})", after.title, link));
    }
    parts.join(" · ")
}

#[test]
fn the_contents_has_the_four_parts_in_order() {
    let (parts, _) = contents();
    assert_eq!(parts, PARTS, "{SUMMARY}'s parts");
}

#[test]
fn the_contents_lists_every_page_of_the_manual_once() {
    let (_, entries) = contents();
    let listed: Vec<&PathBuf> = entries.iter().map(|e| &e.page).collect();
    for page in pages() {
        if !page.starts_with("docs") || page == Path::new(SUMMARY) {
            continue;
        }
        let times = listed.iter().filter(|p| ***p == page).count();
        assert_eq!(times, 1, "{SUMMARY} lists {page:?} {times} times, not once");
    }
    for page in &listed {
        assert!(
            super::root().join(page).is_file(),
            "{SUMMARY} lists {page:?}, which is not a page"
        );
    }
}

#[test]
fn the_readme_links_the_contents() {
    let readme = links(&read(Path::new("README.md")));
    assert!(
        readme.iter().any(|link| link == SUMMARY),
        "README.md links {SUMMARY}"
    );
}

#[test]
fn every_page_links_the_one_before_and_after_it() {
    let (_, entries) = contents();
    for (at, entry) in entries.iter().enumerate() {
        let text = read(&entry.page);
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
        assert_eq!(
            last,
            navigation(&entries, at),
            "{:?} must end with this line, in the contents' order",
            entry.page
        );
    }
}

#[test]
fn links_between_pages_are_written_from_where_they_stand() {
    let page = Path::new("docs/development/architecture.md");
    assert_eq!(
        relative(page, Path::new("docs/security.md")),
        "../security.md"
    );
    assert_eq!(
        relative(page, Path::new("docs/development/adding-a-tool.md")),
        "adding-a-tool.md"
    );
    assert_eq!(
        relative(Path::new("docs/testing.md"), Path::new("docs/SUMMARY.md")),
        "SUMMARY.md"
    );
}
