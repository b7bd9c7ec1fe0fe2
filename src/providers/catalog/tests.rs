use super::*;

fn parse(text: &str) -> CatalogFile {
    toml::from_str(text).unwrap()
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn oauth(provider: &Provider) -> &OAuthClient {
    provider.oauth().expect("an OAuth entry")
}

#[test]
fn demo_entry_is_built_in_and_default() {
    let c = Catalog::build(
        Some("http://127.0.0.1:8080/demo"),
        CatalogFile::default(),
        no_env,
        &[],
    )
    .unwrap();
    let demo = c.default_provider();
    assert_eq!(demo.id, "demo");
    assert_eq!(
        oauth(demo).token_url.as_str(),
        "http://127.0.0.1:8080/demo/token"
    );
    assert_eq!(oauth(demo).pkce, PkceMode::Required);
}

#[test]
fn an_override_changes_only_the_fields_it_names() {
    let c = Catalog::build(
        Some("http://127.0.0.1:8080/demo"),
        parse("[providers.demo]\ntoken_url = \"http://127.0.0.1:9/token\"\n"),
        no_env,
        &[],
    )
    .unwrap();
    let demo = c.get("demo").unwrap();
    assert_eq!(oauth(demo).token_url.as_str(), "http://127.0.0.1:9/token");
    assert_eq!(
        oauth(demo).authorize_url.as_str(),
        "http://127.0.0.1:8080/demo/authorize"
    );
}

#[test]
fn a_generic_provider_needs_its_fields_and_its_secret_variable() {
    let text = "default = \"acme\"\n[providers.acme]\nauthorize_url = \"https://a.example/auth\"\n\
        token_url = \"https://a.example/token\"\napi_base = \"https://api.a.example\"\n\
        client_id = \"g\"\nclient_secret_env = \"ACME_SECRET\"\nadapter = \"demo\"\n";
    let err = Catalog::build(None, parse(text), no_env, &[]).unwrap_err();
    assert!(err.0.contains("ACME_SECRET"), "{err}");
    let c = Catalog::build(
        None,
        parse(text),
        |v| (v == "ACME_SECRET").then(|| "s3cret".to_owned()),
        &[],
    )
    .unwrap();
    assert_eq!(c.default_provider().id, "acme");
    assert!(!format!("{:?}", c.default_provider()).contains("s3cret"));

    let missing = "[providers.acme]\nclient_id = \"g\"\nclient_secret_env = \"S\"\n\
        authorize_url = \"https://a.example/auth\"\n";
    let err = Catalog::build(None, parse(missing), |_| Some("s".into()), &[]).unwrap_err();
    assert!(err.0.contains("providers.acme.token_url"), "{err}");
    let no_client = "[providers.acme]\nauthorize_url = \"https://a.example/auth\"\n";
    let err = Catalog::build(None, parse(no_client), no_env, &[]).unwrap_err();
    assert!(err.0.contains("providers.acme.client_id"), "{err}");
    let no_secret = "[providers.xero]\nclient_id = \"x\"\n";
    let err = Catalog::build(None, parse(no_secret), no_env, &[]).unwrap_err();
    assert!(err.0.contains("providers.xero.client_secret_env"), "{err}");
}

#[test]
fn bad_urls_and_ids_are_named() {
    let err = Catalog::build(
        Some("http://127.0.0.1:8080/demo"),
        parse("[providers.demo]\ntoken_url = \"file:///etc/passwd\"\n"),
        no_env,
        &[],
    )
    .unwrap_err();
    assert!(err.0.contains("providers.demo.token_url"), "{err}");
    let err = toml::from_str::<CatalogFile>("[providers.\"Bad Id\"]\n").unwrap_err();
    assert!(
        err.to_string().contains("`Bad Id` is not a provider id"),
        "{err}"
    );
    let err = toml::from_str::<CatalogFile>("[providers.x]\ntokn_url = \"x\"\n").unwrap_err();
    assert!(err.to_string().contains("tokn_url"));
}

#[test]
fn built_in_providers_are_offered_once_given_a_client() {
    let c = Catalog::build(
        Some("http://127.0.0.1:8080/demo"),
        CatalogFile::default(),
        no_env,
        &[],
    )
    .unwrap();
    assert!(c.get("xero").is_none(), "no client registered: not offered");
    let text = "[providers.xero]\nclient_id = \"x\"\nclient_secret_env = \"XERO_SECRET\"\n\
        [providers.zoho]\nclient_id = \"z\"\nclient_secret_env = \"ZOHO_SECRET\"\n\
        api_base = \"https://www.zohoapis.eu\"\n";
    let c = Catalog::build(
        Some("http://127.0.0.1:8080/demo"),
        parse(text),
        |_| Some("secret".into()),
        &[],
    )
    .unwrap();
    let xero = c.get("xero").unwrap();
    assert_eq!(xero.adapter, AdapterKind::Xero);
    assert_eq!(
        oauth(xero).token_url.as_str(),
        "https://identity.xero.com/connect/token"
    );
    assert_eq!(oauth(xero).refresh_grace_secs, 1800);
    let zoho = c.get("zoho").unwrap();
    assert!(
        matches!(&zoho.api_base, ApiBase::Fixed(url) if url.as_str() == "https://www.zohoapis.eu/")
    );
    assert_eq!(oauth(zoho).extra_authorize_params["access_type"], "offline");
    assert_eq!(oauth(zoho).revoke_body, RevokeBody::Query);
    assert_eq!(c.default_provider().id, "demo");
}

#[test]
fn plain_http_off_loopback_is_refused_naming_the_entry_and_key_unless_allowed() {
    let entry = |token_url: &str| {
        format!(
            "default = \"acme\"\n[providers.acme]\nauthorize_url = \"https://a.example/auth\"\n\
             token_url = \"{token_url}\"\napi_base = \"https://api.a.example\"\n\
             client_id = \"g\"\nclient_secret_env = \"S\"\nadapter = \"demo\"\n"
        )
    };
    let env = |_: &str| Some("s".to_owned());
    let err = Catalog::build(None, parse(&entry("http://a.example/token")), env, &[]).unwrap_err();
    assert!(err.0.contains("providers.acme.token_url"), "{err}");
    assert!(err.0.contains("--allow-insecure-provider acme"), "{err}");
    for loopback in [
        "http://127.0.0.1:9/token",
        "http://localhost:9/token",
        "http://[::1]:9/token",
    ] {
        assert!(Catalog::build(None, parse(&entry(loopback)), env, &[]).is_ok());
    }
    let allowed = ["acme".parse().unwrap()];
    assert!(Catalog::build(None, parse(&entry("http://a.example/token")), env, &allowed).is_ok());
    let unknown = ["nobody".parse().unwrap()];
    let err =
        Catalog::build(None, parse(&entry("https://a.example/t")), env, &unknown).unwrap_err();
    assert!(err.0.contains("`nobody` names no provider"), "{err}");
}

#[test]
fn api_key_entries_are_offered_once_named_and_a_site_template_needs_a_site_field() {
    let c = Catalog::build(None, parse("[providers.paddle]\n"), no_env, &[]).unwrap();
    let paddle = c.get("paddle").expect("named: offered, with no client");
    assert!(paddle.oauth().is_none() && paddle.key_form().is_some());
    assert!(c.get("chargebee").is_none(), "not named: not offered");

    let c = Catalog::build(None, parse("[providers.chargebee]\n"), no_env, &[]).unwrap();
    let ApiBase::PerSite(template) = &c.get("chargebee").unwrap().api_base else {
        panic!("Chargebee's API is per site");
    };
    assert_eq!(
        template
            .url_for(&SiteName::parse("acme").unwrap())
            .unwrap()
            .as_str(),
        "https://acme.chargebee.com/api/v2"
    );

    let no_site_field = "[providers.chargebee]\nkey_fields = []\n";
    let err = Catalog::build(None, parse(no_site_field), no_env, &[]).unwrap_err();
    assert!(err.0.contains("{site}"), "{err}");
    let twice = "[providers.chargebee]\napi_base = \"https://{site}.example/{site}\"\n";
    let err = Catalog::build(None, parse(twice), no_env, &[]).unwrap_err();
    assert!(err.0.contains("once"), "{err}");
    let no_checks = "[providers.paddle]\nadapter = \"stripe\"\n";
    let err = Catalog::build(None, parse(no_checks), no_env, &[]).unwrap_err();
    assert!(err.0.contains("cannot check an API key"), "{err}");
    let scoped = "[providers.paddle]\nwrite_scopes = [\"w\"]\n";
    let err = Catalog::build(None, parse(scoped), no_env, &[]).unwrap_err();
    assert!(err.0.contains("no scopes"), "{err}");
    let plain_http = "[providers.chargebee]\napi_base = \"http://{site}.example\"\n";
    let err = Catalog::build(None, parse(plain_http), no_env, &[]).unwrap_err();
    assert!(err.0.contains("plain http"), "{err}");
}

#[test]
fn no_provider_at_all_names_the_flag_that_turns_the_demo_on() {
    let refused = Catalog::build(None, CatalogFile::default(), no_env, &[]).unwrap_err();
    let said = refused.to_string();
    assert!(
        said.contains("--demo true") && said.contains("--providers"),
        "{said}"
    );
}
