//! Every command the manual shows is run somewhere: each `grantry` (and `grantry bridge`)
//! command line here, against the real binary, with `--help` after it (clap refuses an
//! unknown option or a value that does not parse before it prints help); every other
//! program by the stage named for it in [`COVERED`]. A command whose program is in neither
//! fails the test, so a new one cannot go untested unnoticed.

use std::process::Command;

use super::{pages, read, root};

/// Programs a test or stage runs as the manual shows them, and which.
const COVERED: &[(&str, &str)] = &[
    (
        "scripts/test",
        "CI runs it: `.ci/run` is `CI=true scripts/test`",
    ),
    (
        "grantry-bridge",
        "the bridge stage installs it alone and runs it",
    ),
    (
        "cargo",
        "`cargo install --path crates/grantry-bridge`: the bridge stage",
    ),
    (
        "npx",
        "the clients stage runs the pinned MCP Inspector against grantry",
    ),
    ("docker", "the compose stage validates docker-compose.yml"),
    (
        "curl",
        "the try profile's token request: not runnable here (no container engine runs Dex); \
         the compose stage checks the client, secret, grant and audience it names",
    ),
    (
        "claude",
        "not runnable here; the grantry command it is given is checked",
    ),
    (
        "tests/oidc/install",
        "the test stage installs the same OpenID provider",
    ),
    (
        "ln",
        "the OpenID provider's recipe, as tests/e2e/support/oidc.rs follows it",
    ),
    ("node", "the test stage starts tests/oidc/server.mjs"),
    (
        "python3",
        "the test stage mints tokens with tests/interop/oidc_fixture.py",
    ),
];

/// Shell tools the manual makes a value with (a random secret): run here, each must make one.
const VALUE_MAKERS: [&str; 2] = ["head", "openssl"];

/// A command line of a `sh` block: continuations joined, comments and env assignments off.
fn command_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if let Some(fence) = line.strip_prefix("```") {
            in_sh = !in_sh && fence.trim() == "sh";
            continue;
        }
        if !in_sh {
            continue;
        }
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
/// `PORT` and `…` something of their kind.
fn concrete(arguments: &[String]) -> Vec<String> {
    arguments
        .iter()
        .map(|a| a.trim_matches(|c| c == '[' || c == ']'))
        .map(|a| a.split('|').next().unwrap().to_owned())
        .map(|a| match a.as_str() {
            "N" => "1".to_owned(),
            "ID" | "…" => "x".to_owned(),
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

/// What checking the manual's commands found.
#[derive(Default)]
struct Found {
    grantry: usize,
    uncovered: Vec<String>,
}

impl Found {
    /// Checks one command (with its pipeline): grantry's against the binary, a value maker
    /// run as it is, anything else must be covered.
    fn check(&mut self, whole: &str) {
        let command = words(whole);
        let Some(first) = command.first() else {
            return; // assignments only
        };
        if let Some(arguments) = grantry_arguments(&command) {
            run_grantry(&concrete(&arguments), whole);
            self.grantry += 1;
            return;
        }
        let program = first.trim_matches('"');
        let program = program.rsplit('/').next().unwrap();
        if VALUE_MAKERS.contains(&program) {
            let made = Command::new("sh").args(["-c", whole]).output().unwrap();
            let value = String::from_utf8_lossy(&made.stdout);
            assert!(
                made.status.success() && !value.trim().is_empty(),
                "`{whole}`"
            );
        } else if !COVERED
            .iter()
            .any(|(covered, _)| first.trim_matches('"').ends_with(covered))
        {
            self.uncovered.push(whole.to_owned());
        }
    }
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

#[test]
fn every_command_in_the_manual_is_run_by_a_test_or_a_stage() {
    let mut found = Found::default();
    for page in pages() {
        for line in command_lines(&read(&page)) {
            // What a line substitutes (`$(…)`) is a command of its own.
            for sub in substitutions(&line) {
                for command in commands_of(sub) {
                    found.check(&command);
                }
            }
            let plain = without_substitutions(&line);
            if plain.starts_with("export ") {
                continue; // assignments only
            }
            for command in commands_of(&plain) {
                found.check(&command);
            }
        }
    }
    assert!(
        found.uncovered.is_empty(),
        "commands no test runs: {:#?}",
        found.uncovered
    );
    // The manual shows grantry's own commands for identity, webhooks, keys and the bridge.
    assert!(
        found.grantry >= 8,
        "only {} grantry commands",
        found.grantry
    );
}

#[test]
fn usage_lines_and_continuations_read_as_commands() {
    let text = "```sh\nA=1 grantry --identity oidc \\\n  --listen 0.0.0.0:8080   # here\n```\n";
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
}
