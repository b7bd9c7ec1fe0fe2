use secrecy::SecretString;

use super::*;

/// The configuration these flags give (the environment aside from them).
fn resolve(flags: &[&str]) -> Result<Config, String> {
    resolve_with(flags, |_| {})
}

fn resolve_with(flags: &[&str], adjust: impl FnOnce(&mut ServeArgs)) -> Result<Config, String> {
    let mut args = ServeArgs::from_flags(flags).map_err(|e| e.to_string())?;
    adjust(&mut args);
    Config::resolve(args).map_err(|e| e.to_string())
}

#[test]
fn defaults_follow_the_interface_contract() {
    let c = resolve(&[]).unwrap();
    assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(c.public_url.to_string(), "http://127.0.0.1:8080");
    assert_eq!(c.mcp_url(), "http://127.0.0.1:8080/mcp");
    assert_eq!(c.redirect_uri(), "http://127.0.0.1:8080/oauth/callback");
    assert_eq!(c.retry_hold, Duration::from_secs(45));
    assert_eq!(c.elicitation_timeout, Duration::from_secs(300));
    assert_eq!(c.max_legacy_sessions, 2048);
    assert_eq!(c.request_state_ttl_secs, 600);
    assert!(c.demo);
    assert_eq!(
        c.store,
        StoreUrl::Sqlite("sqlite://./grantry-data/grantry.db".into())
    );
    assert_eq!(c.limits.mcp_per_principal, 600);
    assert_eq!(c.connections.header_read_timeout, Duration::from_secs(10));
}

#[test]
fn dev_identity_refuses_non_loopback_listen() {
    let err = resolve(&["--listen", "0.0.0.0:8080"]).unwrap_err();
    assert!(err.contains("--identity"), "{err}");
    assert!(err.contains("0.0.0.0:8080"), "{err}");
}

#[test]
fn dev_identity_refuses_a_public_url_behind_a_proxy() {
    let err = resolve(&["--public-url", "https://grantry.example"]).unwrap_err();
    assert!(err.contains("--identity"), "{err}");
    assert!(err.contains("https://grantry.example"), "{err}");
}

#[test]
fn bad_settings_are_named() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["--listen", "nowhere"], "--listen", "invalid"),
        (
            &["--public-url", "ftp://x"],
            "--public-url",
            "http or https",
        ),
        (
            &["--public-url", "http://127.0.0.1:8080/grantry"],
            "--public-url",
            "without a path",
        ),
        (&["--keys", "short"], "--keys", ""),
        (&["--store", "mysql://x"], "--store", "not a store URL"),
        (
            &["--retry-hold", "10000"],
            "--retry-hold",
            "between 0 and 300",
        ),
        (
            &["--elicitation-timeout", "0"],
            "--elicitation-timeout",
            "between 1 and 3600",
        ),
        (
            &["--max-legacy-sessions", "0"],
            "--max-legacy-sessions",
            "at least 1",
        ),
        (&["--rate-mcp-ip", "0"], "--rate-mcp-ip", "at least 1"),
        (
            &["--trusted-proxies", "10.0.0.0/8, nowhere"],
            "--trusted-proxies",
            "`nowhere` is not an address",
        ),
        (
            &["--allow-insecure-provider", "Acme"],
            "--allow-insecure-provider",
            "not a provider id",
        ),
        (
            &["--allowed-origins", "https://a.example/path"],
            "--allowed-origins",
            "not an origin",
        ),
    ];
    for (flags, setting, why) in cases {
        let err = resolve(flags).unwrap_err();
        assert!(
            err.contains(setting) && err.contains(why),
            "{err} should name {setting} and say {why}"
        );
    }
}

#[test]
fn lists_are_trimmed_and_typed() {
    let c = resolve(&[
        "--trusted-proxies",
        "127.0.0.1, 10.0.0.0/8,",
        "--allow-insecure-provider",
        "demo",
    ])
    .unwrap();
    assert_eq!(
        c.limits.trusted_proxies,
        [
            "127.0.0.1/32".parse().unwrap(),
            "10.0.0.0/8".parse().unwrap()
        ]
    );
    assert_eq!(c.allow_insecure_providers, ["demo"]);
}

/// The configuration these flags and this file give.
fn with_file(file: &str, flags: &[&str]) -> Result<Config, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grantry.toml");
    std::fs::write(&path, file).unwrap();
    let path = path.to_str().unwrap();
    let argv = ["grantry", "serve", "--config", path].into_iter();
    let cli = Cli::load_from(argv.chain(flags.iter().copied())).map_err(|e| e.to_string())?;
    let Some(Command::Serve(args)) = cli.command else {
        panic!("serve")
    };
    Config::resolve(*args).map_err(|e| e.to_string())
}

#[test]
fn toml_file_fills_what_flags_leave_out() {
    let file = "listen = \"127.0.0.1:9999\"\nretry_hold = 5\n\
                public_url = \"https://localhost:9443/\"\n\
                trusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\"]\n";
    let c = with_file(file, &["--retry-hold", "7"]).unwrap();
    assert_eq!(c.listen.port(), 9999);
    assert_eq!(c.retry_hold, Duration::from_secs(7), "the flag wins");
    assert_eq!(c.public_url.to_string(), "https://localhost:9443");
    assert!(c.is_https());
    assert_eq!(c.limits.trusted_proxies.len(), 2);
    let c = with_file(file, &[]).unwrap();
    assert_eq!(
        c.retry_hold,
        Duration::from_secs(5),
        "the file beats the default"
    );
}

#[test]
fn toml_file_values_are_checked_as_flags_are() {
    for (file, says) in [
        ("retry_hodl = 5\n", "`retry_hodl` is not a setting"),
        ("config = \"x.toml\"\n", "`config` is not a setting"),
        ("retry_hold = 900\n", "between 0 and 300"),
        ("identity = \"root\"\n", "`identity` = `root`"),
        ("rate_mcp_ip = [[1]]\n", "`rate_mcp_ip` must be a string"),
        ("listen = \n", "--config"),
    ] {
        let err = with_file(file, &[]).unwrap_err();
        assert!(err.contains(says), "{file}: {err}");
        assert!(
            err.contains("grantry.toml"),
            "{file}: names the file: {err}"
        );
    }
}

fn oidc_flags() -> Vec<&'static str> {
    vec![
        "--identity",
        "oidc",
        "--public-url",
        "https://grantry.example",
        "--listen",
        "0.0.0.0:8080",
        "--oidc-issuer",
        "https://id.example.com",
        "--oidc-client-id",
        "grantry",
    ]
}

fn oidc(extra: &[&str]) -> Result<Config, String> {
    oidc_with_secret(extra, "s3cret")
}

fn oidc_with_secret(extra: &[&str], secret: &str) -> Result<Config, String> {
    let mut flags = oidc_flags();
    flags.extend_from_slice(extra);
    resolve_with(&flags, |args| {
        args.oidc_client_secret = Some(SecretString::from(secret));
    })
}

#[test]
fn oidc_serves_any_address_and_keeps_its_secret_out_of_debug_output() {
    let c = oidc(&["--oidc-scopes", "invoices:read, invoices:write"]).unwrap();
    let settings = c.oidc.as_ref().unwrap();
    assert_eq!(settings.issuer, "https://id.example.com");
    assert_eq!(
        settings.required_scopes,
        ["invoices:read", "invoices:write"]
    );
    assert!(!format!("{c:?}").contains("s3cret"));
    let mut args = ServeArgs::from_flags(oidc_flags()).unwrap();
    args.oidc_client_secret = Some(SecretString::from("s3cret"));
    assert!(!format!("{args:?}").contains("s3cret"));
    assert!(!c.demo, "no demo by default for real users");
}

#[test]
fn oidc_refuses_what_it_cannot_run_safely() {
    let cases: &[(&[&str], &str)] = &[
        (&["--oidc-issuer", "http://id.example.com"], "--oidc-issuer"),
        (
            &["--oidc-issuer", "https://id.example.com/?tenant=x"],
            "--oidc-issuer",
        ),
        (&["--public-url", "http://grantry.example"], "--public-url"),
        (&["--oidc-client-id", ""], "--oidc-client-id"),
        (&["--rate-mcp-principal", "0"], "--rate-mcp-principal"),
        (&["--oidc-scopes", "invoices,bad\"scope"], "--oidc-scopes"),
        (
            &["--oidc-client-id", "https://grantry.example/mcp"],
            "--oidc-client-id",
        ),
    ];
    for (flags, setting) in cases {
        let err = oidc(flags).unwrap_err();
        assert!(err.contains(setting), "{setting}: {err}");
    }
    let err = oidc_with_secret(&[], "").unwrap_err();
    assert!(err.contains("GRANTRY_OIDC_CLIENT_SECRET"), "{err}");
    let mut without_issuer = ServeArgs::from_flags(oidc_flags()).unwrap();
    without_issuer.oidc_issuer = None;
    without_issuer.oidc_client_secret = Some(SecretString::from("s3cret"));
    let err = Config::resolve(without_issuer).unwrap_err();
    assert!(err.setting.contains("--oidc-issuer"), "{err}");
}

#[test]
fn oidc_on_loopback_may_use_http_for_local_testing() {
    let c = resolve_with(
        &[
            "--identity",
            "oidc",
            "--oidc-issuer",
            "http://127.0.0.1:9000",
            "--oidc-client-id",
            "grantry",
        ],
        |args| args.oidc_client_secret = Some(SecretString::from("s3cret")),
    )
    .unwrap();
    assert!(c.oidc.is_some());
}

/// The manual's configuration table (docs/configuration.md): a row per option, its variable
/// and its default.
#[test]
fn the_manual_documents_every_option_with_its_variable_and_default() {
    use clap::Args as _;
    let manual = include_str!("../../docs/configuration.md");
    let rows: Vec<Vec<&str>> = manual
        .lines()
        .filter(|line| line.starts_with("| `--"))
        .map(|line| line.split(" | ").collect())
        .collect();
    let options = ServeArgs::augment_args(clap::Command::new("grantry"));
    for arg in options.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        let row = rows
            .iter()
            .find(|row| row[0] == format!("| `--{long}`"))
            .unwrap_or_else(|| panic!("docs/configuration.md has no row for --{long}"));
        let env = arg.get_env().unwrap().to_str().unwrap();
        assert_eq!(row[1], format!("`{env}`"), "--{long}'s variable");
        if let [default] = arg.get_default_values() {
            let default = default.to_str().unwrap();
            assert_eq!(row[2], format!("`{default}`"), "--{long}'s default");
        }
    }
}

#[test]
fn a_refused_url_is_named_and_never_repeated() {
    let cases = [
        ("--otlp-endpoint", "ftp://alice:hunter2@collector:4318"),
        ("--store", "mysql://alice:hunter2@db/grantry"),
        ("--public-url", "https://alice:hunter2@g.example"),
        ("--public-url", "https://:hunter2@g.example"),
        ("--webhook-url", "ops=https://alice:hunter2@hooks.example"),
        ("--webhook-url", "https://alice:hunter2@hooks.example/x?a=b"),
        ("--store", "alice:hunter2@db/grantry"),
        ("--support-url", "https://alice:hunter2@help.example"),
    ];
    for (flag, value) in cases {
        let said = resolve(&[flag, value]).unwrap_err();
        assert!(said.contains(flag), "{flag}: {said}");
        assert!(
            !said.contains("hunter2"),
            "{flag} repeats the value: {said}"
        );
    }
    // Taken, it is not shown either where the settings are.
    let key = crate::seal::generate_key();
    let taken = resolve(&[
        "--otlp-endpoint",
        "http://alice:hunter2@collector:4318",
        "--keys",
        &key,
    ])
    .unwrap();
    let shown = format!("{taken:?}");
    assert!(
        !shown.contains("hunter2") && !shown.contains(&key),
        "{shown}"
    );
    // From a file, too.
    let said = with_file(
        "otlp_endpoint = \"ftp://alice:hunter2@collector:4318\"\n",
        &[],
    )
    .unwrap_err();
    assert!(
        said.contains("--otlp-endpoint") && !said.contains("hunter2"),
        "{said}"
    );
}
