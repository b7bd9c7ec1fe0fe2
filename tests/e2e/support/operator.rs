//! The operators' commands as the tests run them (`Server::operator`), and the grantry they
//! run against: `oidc` identity (tests/oidc), the provider fakes, a webhook receiver.

use serde_json::Value;

use super::fake_providers::Fake;
use super::webhooks::Receiver;
use super::{Server, oidc, servers};

/// grantry on `store` under `oidc` identity, offering `fake`'s providers, its lifecycle
/// events sent to `receiver` (as endpoint `hooks`); with the directory of its providers file,
/// which the operators' commands read too: keep it as long as the server.
pub async fn oidc_server(
    store: &[String],
    fake: &Fake,
    receiver: &Receiver,
) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog("xero")).unwrap();
    let mut args = oidc::grantry_args(&oidc::provider().issuer);
    args.extend(store.iter().cloned());
    args.extend(["--providers".into(), catalog.to_str().unwrap().into()]);
    args.extend(["--keys".into(), grantry::seal::generate_key()]);
    args.extend(receiver.flags(&["hooks"], "1,1,1"));
    (Server::start(&servers::as_strs(&args)).await, dir)
}

/// The command's standard output as JSON, once it succeeded saying nothing else on standard
/// error: no message of its own, and no notice among its log lines (see [`no_notice`]).
pub fn json_of(output: &std::process::Output) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    no_notice(&stderr);
    assert_eq!(messages(&stderr), Vec::<&str>::new(), "{stderr}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The lines of a command's standard error that are its own words, not log lines (which
/// begin with their time): `grantry: …`.
pub fn messages(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| !line.starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

/// Asserts standard error holds no notice of the store driver's (sqlx: PostgreSQL's "relation
/// already exists" of each start's migration, say). What an operator's command does log under
/// the default filter stays: its audit lines, the settings' own warnings (a provider's `pkce
/// = "off"`), errors.
pub fn no_notice(stderr: &str) {
    for line in stderr.lines() {
        assert!(
            !line.contains("sqlx"),
            "a store notice on standard error: {line}\n{stderr}"
        );
    }
}

/// `grantry connections list --json` with `filter`.
pub async fn list(server: &Server, filter: &[&str]) -> Vec<Value> {
    let mut command = vec!["connections", "list", "--json"];
    command.extend(filter);
    json_of(&server.operator(&command).await)
        .as_array()
        .unwrap()
        .clone()
}

/// The command run with its standard output a pipe whose reader is already gone (`| head`
/// that read nothing): its exit status and standard error once it exits.
pub async fn into_closed_pipe(server: &Server, command: &[&str]) -> std::process::Output {
    let mut command = server.operator_command(command);
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    command.stdout(writer).stderr(std::process::Stdio::piped());
    let output = tokio::task::spawn_blocking(move || command.output());
    output.await.unwrap().unwrap()
}

/// Asserts the command ended with `code`, saying `says` on standard error.
pub fn refused(output: &std::process::Output, code: i32, says: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
}
