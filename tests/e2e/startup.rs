//! Starting grantry: refusals name the setting, `--help` tells the truth, keys are kept safe.

use std::process::Command;

use crate::support::Server;
use crate::support::server::exit_of;

fn grantry(args: &[&str]) -> std::process::Output {
    exit_of(
        Command::new(env!("CARGO_BIN_EXE_grantry"))
            .args(args)
            .env_remove("GRANTRY_KEYS"),
    )
}

#[test]
fn dev_identity_refuses_a_public_listen_address() {
    let dir = tempfile::tempdir().unwrap();
    let out = grantry(&[
        "--listen",
        "0.0.0.0:18099",
        "--data-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--identity") && err.contains("0.0.0.0:18099"),
        "{err}"
    );
}

#[test]
fn bad_settings_are_named_at_start() {
    let out = grantry(&["--keys", "too-short"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--keys"));
    let out = grantry(&["--store", "mysql://db"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--store"));
}

#[test]
fn trace_export_settings_grantry_cannot_honour_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let start = |variables: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_grantry"));
        command
            .args(["--data-dir", dir.path().to_str().unwrap()])
            .env_remove("GRANTRY_KEYS")
            .envs(variables.iter().copied());
        let out = exit_of(&mut command);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let collector = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
    let grpc = start(&[collector, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
    assert!(
        grpc.contains("OTEL_EXPORTER_OTLP_PROTOCOL") && grpc.contains("http/protobuf"),
        "{grpc}"
    );
    let headers = [
        collector,
        ("OTEL_EXPORTER_OTLP_HEADERS", "bad key=s3cr3t-value"),
    ];
    let bad = start(&headers);
    assert!(bad.contains("OTEL_EXPORTER_OTLP_HEADERS"), "{bad}");
    assert!(
        !bad.contains("s3cr3t-value"),
        "a header's value is never shown: {bad}"
    );
}

#[test]
fn bad_webhook_endpoints_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = ["--data-dir", dir.path().to_str().unwrap()];
    let start = |url: &str, secret: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_grantry"));
        command
            .args(data)
            .args(["--webhook-url", url])
            .env_remove("GRANTRY_KEYS")
            .env_remove("GRANTRY_WEBHOOK_SECRET_OPS");
        if let Some(secret) = secret {
            command.env("GRANTRY_WEBHOOK_SECRET_OPS", secret);
        }
        let out = exit_of(&mut command);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let secret = crate::support::webhooks::SECRET;
    let plain = start("ops=http://hooks.example.com/in", Some(secret));
    assert!(
        plain.contains("--webhook-url") && plain.contains("https"),
        "{plain}"
    );
    let missing = start("ops=https://hooks.example.com/in", None);
    assert!(missing.contains("GRANTRY_WEBHOOK_SECRET_OPS"), "{missing}");
    let short = "whsec_c2hvcnQ=";
    let weak = start("ops=https://hooks.example.com/in", Some(short));
    assert!(weak.contains("24 to 64"), "{weak}");
    assert!(
        !weak.contains("c2hvcnQ"),
        "the secret is never shown: {weak}"
    );
}

#[test]
fn help_documents_every_option_and_its_variable() {
    let out = grantry(&["serve", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for (flag, var) in [
        ("--listen", "GRANTRY_LISTEN"),
        ("--public-url", "GRANTRY_PUBLIC_URL"),
        ("--data-dir", "GRANTRY_DATA_DIR"),
        ("--store", "GRANTRY_STORE"),
        ("--identity", "GRANTRY_IDENTITY"),
        ("--providers", "GRANTRY_PROVIDERS"),
        ("--retry-hold", "GRANTRY_RETRY_HOLD"),
        ("--config", "GRANTRY_CONFIG"),
        ("--keys", "GRANTRY_KEYS"),
    ] {
        assert!(
            help.contains(flag) && help.contains(var),
            "{flag} / {var} in --help"
        );
    }
}

#[test]
fn keys_generate_prints_a_usable_key() {
    let out = grantry(&["keys", "generate"]);
    let key = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_eq!(key.len(), 43);
    assert!(grantry::seal::KeyRing::from_encoded(&[key]).is_ok());
}

#[tokio::test]
async fn a_generated_key_is_private_to_the_owner() {
    use std::os::unix::fs::PermissionsExt;
    let server = Server::start(&[]).await;
    let meta = std::fs::metadata(server.data_dir.path().join("sealing.key")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(server.log_shows("generated one").await);
}

#[tokio::test]
async fn sigterm_stops_grantry_cleanly() {
    let mut server = Server::start(&[]).await;
    let started = std::time::Instant::now();
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(server.log_shows("shutting down").await);
}

#[test]
fn migrate_brings_a_store_up_to_date_and_exits() {
    let dir = tempfile::tempdir().unwrap();
    let out = grantry(&["migrate", "--data-dir", dir.path().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("up to date"));
    assert!(dir.path().join("grantry.db").exists());
    let out = grantry(&["migrate", "--store", "postgres://nobody@127.0.0.1:1/none"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--store"));
}

#[tokio::test]
async fn retiring_a_key_in_use_is_refused_until_rewrapped() {
    let store_dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", store_dir.path().join("g.db").display());
    let data = store_dir.path().to_str().unwrap().to_owned();
    let (k1, k2) = (grantry::seal::generate_key(), grantry::seal::generate_key());
    let both = format!("{k2},{k1}");
    let id = |k: &str| {
        grantry::seal::KeyRing::from_encoded(&[k])
            .unwrap()
            .current_key_id()
    };

    // A grant sealed under k1. (The same port throughout: the demo provider's tokens are
    // bound to its issuer, which is the public URL.)
    let mut server = Server::start(&["--store", &store, "--keys", &k1]).await;
    let mcp = crate::support::Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    crate::support::Browser::new().sign_in(&link, true).await;
    assert!(server.terminate().success(), "stopped as an operator would");

    // k1 dropped from the ring while a grant uses it: refused, with the count.
    let out = grantry(&["--store", &store, "--keys", &k2, "--data-dir", &data]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("1 grant(s) under key {}", id(&k1))),
        "{err}"
    );
    assert!(err.contains("grantry keys rewrap"), "{err}");

    let status = grantry(&[
        "keys",
        "status",
        "--store",
        &store,
        "--keys",
        &both,
        "--data-dir",
        &data,
    ]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains(&format!("1 grant(s) sealed under {}", id(&k1))),
        "{text}"
    );

    let rewrap = grantry(&[
        "keys",
        "rewrap",
        "--store",
        &store,
        "--keys",
        &both,
        "--data-dir",
        &data,
    ]);
    assert!(
        rewrap.status.success(),
        "{}",
        String::from_utf8_lossy(&rewrap.stderr)
    );
    assert!(String::from_utf8_lossy(&rewrap.stdout).contains("re-sealed 1 grant(s)"));

    // Now k1 can go: grantry starts on k2 alone, and the grant is under k2. (Listing invoices
    // is not the check here: the demo provider seals its own tokens with the same ring, so its
    // k1 tokens end with k1, as a real provider's would not.)
    let server = server
        .restart_with(&["--store", &store, "--keys", &k2])
        .await;
    drop(server);
    let status = grantry(&[
        "keys",
        "status",
        "--store",
        &store,
        "--keys",
        &k2,
        "--data-dir",
        &data,
    ]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains(&format!("1 grant(s) sealed under {}", id(&k2))),
        "{text}"
    );
    assert!(!text.contains("not in the ring"), "{text}");
}

/// The conformance suite's fixture tools live in their own crate (`grantry-conformance`):
/// the binary the tests (and users) run has none of them.
#[test]
fn the_product_binary_carries_no_conformance_fixture() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_grantry")).unwrap();
    for fixture in [
        "test_simple_text",
        "test_streaming_elicitation",
        "test_tool_with_task",
    ] {
        assert!(
            memchr::memmem::find(&binary, fixture.as_bytes()).is_none(),
            "{fixture} is in the binary"
        );
    }
}
