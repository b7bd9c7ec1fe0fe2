//! The `grantry-bridge` binary on its own: it tells the truth about its options, and refuses a
//! bad server URL before it reads anything.

// Test scaffolding, not product: an unwrap that fails is the run's failure.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};

fn bridge(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_grantry-bridge"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn help_names_the_program_and_its_options() {
    let out = bridge(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.contains("Usage: grantry-bridge [OPTIONS] <URL>"),
        "{help}"
    );
    for option in [
        "--open-with",
        "--wait",
        "--header",
        "--client-id",
        "--token-cache",
    ] {
        assert!(help.contains(option), "{option} missing from:\n{help}");
    }
}

#[test]
fn a_plain_http_server_elsewhere_is_refused_with_status_2() {
    let out = bridge(&["http://connector.example.com/mcp"]);
    assert_eq!(out.status.code(), Some(2));
    let error = String::from_utf8(out.stderr).unwrap();
    assert!(
        error.contains("http is for loopback addresses only; use https"),
        "{error}"
    );
}

#[test]
fn it_stops_cleanly_when_its_client_closes_stdin() {
    // stdin is /dev/null: the client has gone before saying anything.
    let out = bridge(&["http://127.0.0.1:9/mcp"]);
    assert!(out.status.success(), "{out:?}");
}
