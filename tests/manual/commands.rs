//! The manual's command lines, read as a shell reads them, and a check of the grantry command
//! lines of the blocks no test runs ([`super::blocks`]: marked `not run` or `run by` a
//! stage): each against the real binary, with `--help` after it (clap refuses an unknown
//! option or a value that does not parse before it prints help). The blocks that run are
//! checked by running them ([`super::recipes`]).

use std::process::Command;

use super::blocks::{Marker, shell};
use super::root;

/// The command lines of a shell block's text: continuations joined, comments off.
pub fn command_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.split(" #").next().unwrap();
        let (line, continues) = match line.trim_end().strip_suffix('\\') {
            Some(head) => (head, true),
            None => (line, false),
        };
        pending.push_str(line.trim());
        pending.push(' ');
        if !continues {
            let command = pending.trim().to_owned();
            pending.clear();
            if !command.is_empty() {
                lines.push(command);
            }
        }
    }
    lines
}

/// The words of a command after its environment assignments (`A=b cmd …`, `export A=…`).
fn words(command: &str) -> Vec<String> {
    let words: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    let start = words
        .iter()
        .position(|w| {
            let assignment = w.contains('=') && !w.starts_with('-');
            !assignment && w != "export"
        })
        .unwrap_or(words.len());
    words[start..].to_vec()
}

/// The arguments grantry gets in `words`, if it is a grantry command: `grantry …`,
/// `cargo run --release -- …`, or one a client launches after `--` or as its command.
fn grantry_arguments(words: &[String]) -> Option<Vec<String>> {
    let dashes = words.iter().rposition(|w| w == "--");
    if words.starts_with(&["cargo".into(), "run".into()]) {
        return Some(dashes.map_or(Vec::new(), |d| words[d + 1..].to_vec()));
    }
    let after_dashes = dashes.map_or(0, |d| d + 1);
    // What a client launches follows its `--`; before it, `grantry` may be a server's name.
    let launched = &words[after_dashes..];
    let at = launched
        .iter()
        .position(|w| w == "grantry" || w.ends_with("/grantry"))?;
    Some(launched[at + 1..].to_vec())
}

/// The commands substituted into `command` (`$(…)`), each run on its own.
fn substitutions(command: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = command;
    while let Some(at) = rest.find("$(") {
        let inner = &rest[at + 2..];
        let Some(end) = inner.find(')') else {
            break;
        };
        found.push(&inner[..end]);
        rest = &inner[end + 1..];
    }
    found
}

/// A usage line's placeholders made concrete: `[--a x|y]` is `--a x`, `N` a number, `ID`,
/// `PORT` and `…` something of their kind, `ISSUER SUBJECT` the `dev` identity's person.
pub fn concrete(arguments: &[String]) -> Vec<String> {
    arguments
        .iter()
        .map(|a| a.trim_matches(|c| c == '[' || c == ']'))
        .map(|a| a.split('|').next().unwrap().to_owned())
        .map(|a| match a.as_str() {
            "N" => "1".to_owned(),
            "ID" | "…" => "x".to_owned(),
            "ISSUER" => "urn:grantry:dev".to_owned(),
            "SUBJECT" => "local-user".to_owned(),
            "CLIENT_ID" => "some-client".to_owned(),
            _ => a.replace("PORT", "9"),
        })
        .filter(|a| !a.is_empty())
        .collect()
}

/// `command` with each substitution (`$(…)`) as one word.
fn without_substitutions(command: &str) -> String {
    let mut plain = command.to_owned();
    for sub in substitutions(command) {
        plain = plain.replace(&format!("$({sub})"), "VALUE");
    }
    plain
}

/// The commands of a line (`a && b; c &`), each with its pipeline, as text: separators in
/// quotes or a usage line's brackets are not separators.
fn commands_of(line: &str) -> Vec<String> {
    let (mut found, mut current) = (Vec::new(), String::new());
    let (mut quote, mut brackets) = (None, 0usize);
    for c in line.chars() {
        match (c, quote) {
            ('\'' | '"', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('[', None) => brackets += 1,
            (']', None) => brackets = brackets.saturating_sub(1),
            ('&' | ';', None) if brackets == 0 => {
                found.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    found.push(current);
    found
        .into_iter()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// `grantry ARGUMENTS --help` must succeed: every option exists and its value parses.
fn run_grantry(arguments: &[String], whole: &str) {
    let ran = Command::new(env!("CARGO_BIN_EXE_grantry"))
        .args(arguments)
        .arg("--help")
        .env_clear()
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "`{whole}` ({arguments:?}) is refused: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
}

/// Every command of a line: what it substitutes (`$(…)`), then the line's own.
pub fn every_command(line: &str) -> Vec<String> {
    let mut found: Vec<String> = substitutions(line)
        .into_iter()
        .flat_map(commands_of)
        .collect();
    found.extend(commands_of(&without_substitutions(line)));
    found
}

/// The program a command runs, if it runs one: after its assignments and a shell keyword
/// (`until curl …` runs curl).
pub fn program(command: &str) -> Option<String> {
    let words = words(command);
    let mut words = words.iter().map(|w| w.trim_matches('"'));
    let first = words.next()?;
    let keyword = ["until", "while", "if", "then", "else", "do", "!"].contains(&first);
    let program = if keyword { words.next()? } else { first };
    (!["done", "fi", "}"].contains(&program)).then(|| program.to_owned())
}

/// The grantry arguments of a command, if it is a grantry command (see [`grantry_arguments`]).
pub fn grantry_command(command: &str) -> Option<Vec<String>> {
    grantry_arguments(&words(command))
}

#[test]
fn grantry_commands_no_test_runs_still_parse() {
    let mut checked = 0;
    for block in shell() {
        if !matches!(block.marker, Marker::NotRun(_) | Marker::RunBy(_)) {
            continue;
        }
        for line in command_lines(&block.text) {
            for command in every_command(&line) {
                if let Some(arguments) = grantry_command(&command) {
                    run_grantry(&concrete(&arguments), &command);
                    checked += 1;
                }
            }
        }
    }
    // The manual shows grantry under oidc identity, and the bridge as clients launch it.
    assert!(checked >= 4, "only {checked} grantry commands");
}

#[test]
fn usage_lines_and_continuations_read_as_commands() {
    let text = "A=1 grantry --identity oidc \\\n  --listen 0.0.0.0:8080   # here\n";
    let lines = command_lines(text);
    assert_eq!(lines, ["A=1 grantry --identity oidc --listen 0.0.0.0:8080"]);
    let arguments = grantry_arguments(&words(&lines[0])).unwrap();
    assert_eq!(
        arguments,
        ["--identity", "oidc", "--listen", "0.0.0.0:8080"]
    );
    let client = "claude mcp add grantry -- /usr/local/bin/grantry bridge https://g/mcp";
    let launched = grantry_arguments(&words(client)).unwrap();
    assert_eq!(launched, ["bridge", "https://g/mcp"]);
    let run = grantry_arguments(&words("cargo run --release")).unwrap();
    assert!(run.is_empty());
    assert_eq!(
        commands_of("a=\"$(x)\" && ln -s a b; python3 -c 'p(1); p(2)' &"),
        ["a=\"$(x)\"", "ln -s a b", "python3 -c 'p(1); p(2)'"]
    );
    assert_eq!(
        commands_of("grantry events list [--status a|b]"),
        ["grantry events list [--status a|b]"]
    );
    let usage: Vec<String> = [
        "events",
        "list",
        "[--status",
        "pending|parked]",
        "[--limit",
        "N]",
    ]
    .map(str::to_owned)
    .to_vec();
    assert_eq!(
        concrete(&usage),
        ["events", "list", "--status", "pending", "--limit", "1"]
    );
    let until = "until curl -sf http://h/readyz; do sleep 1; done";
    let programs: Vec<Option<String>> = every_command(until).iter().map(|c| program(c)).collect();
    assert_eq!(programs, [Some("curl".into()), Some("sleep".into()), None]);
    let made = every_command("export K=\"$(grantry keys generate)\" P=\"$(openssl rand -hex 16)\"");
    assert_eq!(program(&made[0]).as_deref(), Some("grantry"));
    assert_eq!(program(&made[1]).as_deref(), Some("openssl"));
    assert_eq!(program(&made[2]), None);
}
