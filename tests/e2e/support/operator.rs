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

/// The command's standard output as JSON, once it succeeded.
pub fn json_of(output: &std::process::Output) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    serde_json::from_slice(&output.stdout).unwrap()
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

/// Asserts the command ended with `code`, saying `says` on standard error.
pub fn refused(output: &std::process::Output, code: i32, says: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
}
