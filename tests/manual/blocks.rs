//! The manual's fenced blocks, and how each shell (`sh`) block is checked. A block runs as
//! written ([`super::recipes`]) unless the line before its fence holds a marker, an HTML
//! comment GitHub does not show:
//!
//! - `<!-- synopsis -->`: usage lines; each runs with its placeholders filled in.
//! - `<!-- not run: REASON -->`: it needs what this machine lacks; REASON is one of
//!   [`REASONS`]. Its grantry command lines are still parsed ([`super::commands`]).
//! - `<!-- run by: STAGE -->`: a stage of `scripts/test` runs these commands; every word of
//!   them must be in that stage (its body in `scripts/test` and the files of the `tests/`
//!   folders it names), so the marker cannot claim a stage that runs something else.
//!
//! Every fence names its language, and a shell block is `sh`, so none slips past. Testing's
//! page ([`TESTING`]) holds a table of what runs and what is marked, checked against the
//! manual here so it cannot go stale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::commands::command_lines;
use super::{pages, read, root};

/// Why a shell block is not run here: the closed list a `not run` marker may name, each
/// with what it means.
pub const REASONS: [(&str, &str); 6] = [
    (
        "the test command itself",
        "`scripts/test` is what runs this test",
    ),
    (
        "a container engine",
        "this project's machines have none; the compose stage validates the file",
    ),
    (
        "a public URL",
        "a client or host outside reaching grantry on the internet",
    ),
    (
        "your identity provider",
        "an organisation's own OpenID Connect issuer",
    ),
    (
        "an MCP client app",
        "a desktop or command-line client that is not installed here",
    ),
    (
        "a long run",
        "the long form of a soak or benchmark, for a person to start; a stage runs its short form",
    ),
];

/// The page that tells how many blocks run and how many are marked, and why.
pub const TESTING: &str = "docs/testing.md";

/// What a block's marker says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    /// No marker: the block runs as written.
    Run,
    /// Usage lines, each run with its placeholders filled in.
    Synopsis,
    /// Needs what this machine lacks, one of [`REASONS`].
    NotRun(&'static str),
    /// A stage of `scripts/test` runs these commands.
    RunBy(String),
}

/// One fenced block of a page.
#[derive(Debug)]
pub struct Block {
    pub page: PathBuf,
    /// The line of the opening fence, from 1.
    pub line: usize,
    pub lang: String,
    /// The lines between the fences.
    pub text: String,
    pub marker: Marker,
}

impl Block {
    /// `page:line`, to name the block in a failure.
    pub fn place(&self) -> String {
        format!("{}:{}", self.page.display(), self.line)
    }

    /// Whether a test runs this block's commands.
    pub fn runs(&self) -> bool {
        matches!(self.marker, Marker::Run | Marker::Synopsis)
    }
}

/// The marker an HTML comment line states, if it is one; a comment that looks like a marker
/// but is not one of them is refused.
fn marker(line: &str) -> Result<Option<Marker>, String> {
    let Some(inner) = line
        .trim()
        .strip_prefix("<!--")
        .and_then(|l| l.strip_suffix("-->"))
    else {
        return Ok(None);
    };
    let inner = inner.trim();
    if inner == "synopsis" {
        return Ok(Some(Marker::Synopsis));
    }
    if let Some(reason) = inner.strip_prefix("not run:") {
        let reason = reason.trim();
        return REASONS
            .iter()
            .find(|(known, _)| *known == reason)
            .map(|(known, _)| Some(Marker::NotRun(known)))
            .ok_or_else(|| format!("`{reason}` is none of the reasons {REASONS:?}"));
    }
    if let Some(stage) = inner.strip_prefix("run by:") {
        return Ok(Some(Marker::RunBy(stage.trim().to_owned())));
    }
    if inner.contains("run") || inner.contains("synopsis") {
        return Err(format!("`{line}` is not a marker this test knows"));
    }
    Ok(None)
}

/// The fenced blocks of one page.
pub fn blocks_of(page: &Path, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (at, line) in lines.iter().enumerate() {
        let Some(info) = line.strip_prefix("```") else {
            if let Some(block) = open.as_mut() {
                block.text.push_str(line);
                block.text.push('\n');
            }
            continue;
        };
        if let Some(block) = open.take() {
            found.push(block);
            continue;
        }
        let place = format!("{}:{}", page.display(), at + 1);
        let before = at.checked_sub(1).map_or("", |b| lines[b]);
        let marker = marker(before)
            .unwrap_or_else(|why| panic!("{place}: {why}"))
            .unwrap_or(Marker::Run);
        open = Some(Block {
            page: page.to_owned(),
            line: at + 1,
            lang: info.trim().to_owned(),
            text: String::new(),
            marker,
        });
    }
    assert!(
        open.is_none(),
        "{}: a fence is never closed",
        page.display()
    );
    found
}

/// Every fenced block of the README and the manual.
pub fn all() -> Vec<Block> {
    pages()
        .iter()
        .flat_map(|page| blocks_of(page, &read(page)))
        .collect()
}

/// Every `sh` block.
pub fn shell() -> Vec<Block> {
    all().into_iter().filter(|b| b.lang == "sh").collect()
}

/// The stage's part of `scripts/test` (its function's body) and every file of the `tests/`
/// folders that body names; `None` when there is no such stage.
pub fn stage_text(stage: &str) -> Option<String> {
    let script = std::fs::read_to_string(root().join("scripts/test")).unwrap();
    let head = format!("stage_{stage}() {{");
    let start = script.lines().position(|l| l.starts_with(&head))?;
    let mut body = String::new();
    for line in script.lines().skip(start) {
        body.push_str(line);
        body.push('\n');
        if line == "}" || (line.starts_with(&head) && line.trim_end().ends_with('}')) {
            break;
        }
    }
    let mut text = body.clone();
    for word in body.split(|c: char| c.is_whitespace() || c == '"' || c == '=') {
        let Some(folder) = word
            .strip_prefix("tests/")
            .and_then(|w| w.split('/').next())
        else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(root().join("tests").join(folder)) else {
            continue;
        };
        for entry in entries {
            if let Ok(file) = std::fs::read_to_string(entry.unwrap().path()) {
                text.push_str(&file);
            }
        }
    }
    Some(text)
}

/// Why a command of a `run by` block is not found in its stage, if it is not.
fn not_in_stage(command: &str, stage_text: &str) -> Option<String> {
    for word in command.split_whitespace() {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        if word == "npx" || word.contains("://") {
            continue; // how a person starts it, and where their grantry is
        }
        // `@scope/package@1.2.3`: the stage pins that version.
        let needed = match word.rsplit_once('@') {
            Some((package, version)) if !package.is_empty() => {
                format!("\"{package}\": \"{version}\"")
            }
            _ => word.to_owned(),
        };
        if !stage_text.contains(&needed) {
            return Some(format!("`{needed}` of `{command}`"));
        }
    }
    None
}

#[test]
fn every_fence_names_its_language_and_shell_blocks_are_sh() {
    let mut bad = Vec::new();
    for block in all() {
        if block.lang.is_empty() {
            bad.push(format!("{}: a fence without a language", block.place()));
        }
        if ["bash", "shell", "console", "zsh", "shell-session"].contains(&block.lang.as_str()) {
            bad.push(format!("{}: `{}`: write `sh`", block.place(), block.lang));
        }
        if block.lang != "sh" && block.marker != Marker::Run {
            bad.push(format!(
                "{}: a marker before a `{}` block",
                block.place(),
                block.lang
            ));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn a_block_run_by_a_stage_is_run_there() {
    let mut bad = Vec::new();
    for block in shell() {
        let Marker::RunBy(stage) = &block.marker else {
            continue;
        };
        let Some(text) = stage_text(stage) else {
            bad.push(format!(
                "{}: scripts/test has no stage `{stage}`",
                block.place()
            ));
            continue;
        };
        for line in command_lines(&block.text) {
            if let Some(missing) = not_in_stage(&line, &text) {
                bad.push(format!(
                    "{}: the {stage} stage lacks {missing}",
                    block.place()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The rows of the table on [`TESTING`] as they must read: what happens to the manual's shell
/// blocks, and how many.
pub fn expected_rows() -> BTreeMap<String, String> {
    let blocks = shell();
    let mut rows = BTreeMap::new();
    for (label, kind) in [
        ("run as written", Marker::Run),
        ("synopses, each line run filled in", Marker::Synopsis),
    ] {
        let of_kind: Vec<&Block> = blocks.iter().filter(|b| b.marker == kind).collect();
        let commands: usize = of_kind.iter().map(|b| command_lines(&b.text).len()).sum();
        let count = format!("{} blocks, {commands} commands", of_kind.len());
        rows.insert(label.to_owned(), count);
    }
    let mut marked: BTreeMap<String, usize> = BTreeMap::new();
    for block in &blocks {
        let label = match &block.marker {
            Marker::NotRun(reason) => format!("not run: {reason}"),
            Marker::RunBy(stage) => format!("run by the {stage} stage"),
            Marker::Run | Marker::Synopsis => continue,
        };
        *marked.entry(label).or_default() += 1;
    }
    for (label, count) in marked {
        let unit = if count == 1 { "block" } else { "blocks" };
        rows.insert(label, format!("{count} {unit}"));
    }
    rows
}

/// The first two cells of each row of the table on [`TESTING`] whose header starts with
/// `| shell blocks |`.
fn stated_rows() -> BTreeMap<String, String> {
    let page = read(Path::new(TESTING));
    let mut rows = BTreeMap::new();
    let mut in_table = false;
    for line in page.lines() {
        if line.starts_with("| shell blocks |") {
            in_table = true;
            continue;
        }
        if !in_table || line.starts_with("|---") {
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 3 {
            break;
        }
        rows.insert(cells[1].replace('`', ""), cells[2].to_owned());
    }
    rows
}

#[test]
fn the_testing_page_says_what_runs_and_what_is_marked() {
    let expected = expected_rows();
    let stated = stated_rows();
    assert_eq!(
        stated, expected,
        "{TESTING}'s table of the manual's shell blocks (left) is not what the manual holds \
         (right): write the right one there"
    );
}

#[test]
fn markers_are_read_as_written() {
    let text = "x\n<!-- not run: a container engine -->\n```sh\ndocker compose up\n```\n\
                <!-- run by: bridge -->\n```sh\na\nb\n```\n```toml\nk = 1\n```\n";
    let found = blocks_of(Path::new("p.md"), text);
    let kinds: Vec<&Marker> = found.iter().map(|b| &b.marker).collect();
    assert_eq!(
        kinds,
        [
            &Marker::NotRun("a container engine"),
            &Marker::RunBy("bridge".into()),
            &Marker::Run
        ]
    );
    assert_eq!((found[1].line, found[1].text.as_str()), (7, "a\nb\n"));
    assert!(marker("<!-- not run: lazy -->").is_err());
    assert!(marker("<!-- not runnable -->").is_err());
    assert_eq!(marker("<!-- a note -->"), Ok(None));
    let stage = "stage_x() {\n  cargo install --locked --path crates/b\n  \"$d/b\" --help\n}\n";
    assert_eq!(
        not_in_stage("cargo install --locked --path crates/b", stage),
        None
    );
    assert!(not_in_stage("cargo install --force", stage).is_some());
    let pinned = "\"@m/inspector\": \"2.12.0\" '--cli' tools/list";
    assert_eq!(
        not_in_stage(
            "npx @m/inspector@2.12.0 --cli http://h/mcp --method",
            pinned
        ),
        Some("`--method` of `npx @m/inspector@2.12.0 --cli http://h/mcp --method`".into())
    );
}
