use super::*;

fn resolve(args: ServeArgs) -> Result<Config, ConfigError> {
    Config::resolve(args)
}

#[test]
fn defaults_follow_the_interface_contract() {
    let c = resolve(ServeArgs::default()).unwrap();
    assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(c.public_url, "http://127.0.0.1:8080");
    assert_eq!(c.mcp_url(), "http://127.0.0.1:8080/mcp");
    assert_eq!(c.redirect_uri(), "http://127.0.0.1:8080/oauth/callback");
    assert_eq!(c.retry_hold, Duration::from_secs(45));
    assert_eq!(c.elicitation_timeout, Duration::from_secs(300));
    assert_eq!(c.max_legacy_sessions, 2048);
    assert_eq!(c.request_state_ttl_secs, 600);
    assert!(c.demo);
    assert!(c.store.starts_with("sqlite://"));
}

#[test]
fn dev_identity_refuses_non_loopback_listen() {
    let err = resolve(ServeArgs {
        listen: Some("0.0.0.0:8080".into()),
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.setting.contains("--identity"), "{err}");
    assert!(err.message.contains("0.0.0.0:8080"), "{err}");
}

#[test]
fn dev_identity_refuses_a_public_url_behind_a_proxy() {
    let err = resolve(ServeArgs {
        public_url: Some("https://grantry.example".into()),
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.setting.contains("--identity"), "{err}");
    assert!(err.message.contains("https://grantry.example"), "{err}");
}

#[test]
fn bad_settings_are_named() {
    let cases = [
        (
            ServeArgs {
                listen: Some("nowhere".into()),
                ..Default::default()
            },
            "--listen",
        ),
        (
            ServeArgs {
                public_url: Some("ftp://x".into()),
                ..Default::default()
            },
            "--public-url",
        ),
        (
            ServeArgs {
                public_url: Some("http://127.0.0.1:8080/grantry".into()),
                ..Default::default()
            },
            "--public-url",
        ),
        (
            ServeArgs {
                keys: Some("short".into()),
                ..Default::default()
            },
            "--keys",
        ),
        (
            ServeArgs {
                store: Some("mysql://x".into()),
                ..Default::default()
            },
            "--store",
        ),
        (
            ServeArgs {
                retry_hold: Some(10_000),
                ..Default::default()
            },
            "--retry-hold",
        ),
        (
            ServeArgs {
                elicitation_timeout: Some(0),
                ..Default::default()
            },
            "--elicitation-timeout",
        ),
        (
            ServeArgs {
                max_legacy_sessions: Some(0),
                ..Default::default()
            },
            "--max-legacy-sessions",
        ),
    ];
    for (args, setting) in cases {
        let err = resolve(args).unwrap_err();
        assert!(
            err.setting.starts_with(setting),
            "{err} should name {setting}"
        );
    }
}

#[test]
fn toml_file_fills_what_flags_leave_out_and_rejects_unknown_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grantry.toml");
    std::fs::write(
        &path,
        "listen = \"127.0.0.1:9999\"\nretry_hold = 5\npublic_url = \"https://localhost:9443/\"\n",
    )
    .unwrap();
    let c = resolve(ServeArgs {
        config: Some(path.clone()),
        retry_hold: Some(7),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(c.listen.port(), 9999);
    assert_eq!(c.retry_hold, Duration::from_secs(7), "the flag wins");
    assert_eq!(c.public_url, "https://localhost:9443");
    assert!(c.is_https());

    std::fs::write(&path, "retry_hodl = 5\n").unwrap();
    let err = resolve(ServeArgs {
        config: Some(path),
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.setting.contains("--config"));
    assert!(err.message.contains("retry_hodl"), "{err}");
}

fn oidc_args() -> ServeArgs {
    ServeArgs {
        identity: Some(IdentityMode::Oidc),
        public_url: Some("https://grantry.example".into()),
        listen: Some("0.0.0.0:8080".into()),
        oidc_issuer: Some("https://id.example.com".into()),
        oidc_client_id: Some("grantry".into()),
        oidc_client_secret: Some(Secret("s3cret".into())),
        ..Default::default()
    }
}

#[test]
fn oidc_serves_any_address_and_keeps_its_secret_out_of_debug_output() {
    let c = resolve(ServeArgs {
        oidc_scopes: Some("invoices:read, invoices:write".into()),
        ..oidc_args()
    })
    .unwrap();
    let oidc = c.oidc.as_ref().unwrap();
    assert_eq!(oidc.issuer, "https://id.example.com");
    assert_eq!(oidc.required_scopes, ["invoices:read", "invoices:write"]);
    assert!(!format!("{c:?}").contains("s3cret"));
    assert!(!format!("{:?}", oidc_args()).contains("s3cret"));
}

#[test]
fn oidc_refuses_what_it_cannot_run_safely() {
    let cases = [
        (
            ServeArgs {
                oidc_issuer: None,
                ..oidc_args()
            },
            "--oidc-issuer",
        ),
        (
            ServeArgs {
                oidc_issuer: Some("http://id.example.com".into()),
                ..oidc_args()
            },
            "--oidc-issuer",
        ),
        (
            ServeArgs {
                oidc_issuer: Some("https://id.example.com/?tenant=x".into()),
                ..oidc_args()
            },
            "--oidc-issuer",
        ),
        (
            ServeArgs {
                public_url: Some("http://grantry.example".into()),
                ..oidc_args()
            },
            "--public-url",
        ),
        (
            ServeArgs {
                oidc_client_id: None,
                ..oidc_args()
            },
            "--oidc-client-id",
        ),
        (
            ServeArgs {
                oidc_client_secret: Some(Secret(String::new())),
                ..oidc_args()
            },
            "GRANTRY_OIDC_CLIENT_SECRET",
        ),
        (
            ServeArgs {
                rate_mcp_principal: Some(0),
                ..oidc_args()
            },
            "--rate-mcp-principal",
        ),
        (
            ServeArgs {
                oidc_scopes: Some("invoices,bad\"scope".into()),
                ..oidc_args()
            },
            "--oidc-scopes",
        ),
        (
            ServeArgs {
                oidc_client_id: Some("https://grantry.example/mcp".into()),
                ..oidc_args()
            },
            "--oidc-client-id",
        ),
    ];
    for (args, setting) in cases {
        let err = resolve(args).unwrap_err();
        assert!(err.setting.contains(setting), "{setting}: {err}");
    }
}

#[test]
fn oidc_on_loopback_may_use_http_for_local_testing() {
    let c = resolve(ServeArgs {
        public_url: None,
        listen: Some("127.0.0.1:8080".into()),
        oidc_issuer: Some("http://127.0.0.1:9000".into()),
        ..oidc_args()
    })
    .unwrap();
    assert!(c.oidc.is_some());
}
