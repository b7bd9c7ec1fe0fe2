//! Where to authorize: the server's Protected Resource Metadata (RFC 9728, named by its 401,
//! else at its well-known places) and its authorization server's metadata (RFC 8414, or
//! OpenID Connect discovery).

use serde_json::Value;
use url::Url;

use super::{AUTH_ANSWER_BYTES, AuthError};
use crate::body;

/// What one authorization needs to know.
pub(super) struct Endpoints {
    pub(super) issuer: String,
    pub(super) authorization_endpoint: Url,
    pub(super) token_endpoint: Url,
    pub(super) registration_endpoint: Option<Url>,
    /// The token endpoint's authentication methods (`token_endpoint_auth_methods_supported`).
    pub(super) auth_methods: Vec<String>,
    /// The server takes a Client ID Metadata Document's URL as a client id.
    pub(super) accepts_metadata_documents: bool,
    /// The resource indicator (RFC 8707): the server as its Protected Resource Metadata
    /// names it, verbatim.
    pub(super) resource: String,
    /// The scopes to ask for (space-separated; may be empty).
    pub(super) scope: String,
    /// The server says it puts `iss` in every authorization response (RFC 9207).
    pub(super) sends_iss: bool,
}

/// Every request of discovery, registration and the token endpoint gives up after this.
pub(super) const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

pub(super) async fn discover(
    http: &reqwest::Client,
    server: &Url,
    challenge: Option<&str>,
) -> Result<Endpoints, AuthError> {
    let local = grantry_base::net::is_loopback(server);
    let resource = protected_resource(http, server, challenge, local).await?;
    let resource_id = check_resource(&resource, server)?;
    // Kept as written: the metadata's issuer must be this string exactly (a parsed URL would
    // gain a trailing `/`).
    let named = resource["authorization_servers"][0]
        .as_str()
        .ok_or_else(|| missing_field("the Protected Resource Metadata", "authorization_servers"))?;
    let issuer = Url::parse(named)
        .map_err(|_| missing_field("the Protected Resource Metadata", "authorization_servers"))?;
    secure(&issuer, local, "authorization_servers")?;
    let metadata = authorization_server(http, &issuer).await?;
    // RFC 8414 §3.3: the metadata is the issuer's own, identical, not merely alike.
    if metadata["issuer"].as_str() != Some(named) {
        return Err(AuthError::Discovery {
            what: "the authorization server's metadata",
            reason: "its issuer is not the authorization server the resource names".into(),
        });
    }
    let endpoint = |name: &'static str| {
        let url = metadata[name]
            .as_str()
            .and_then(|u| Url::parse(u).ok())
            .ok_or_else(|| missing_field("the authorization server's metadata", name))?;
        secure(&url, local, name)?;
        Ok::<Url, AuthError>(url)
    };
    Ok(Endpoints {
        issuer: named.to_owned(),
        authorization_endpoint: endpoint("authorization_endpoint")?,
        token_endpoint: endpoint("token_endpoint")?,
        registration_endpoint: endpoint("registration_endpoint").ok(),
        auth_methods: strings(&metadata["token_endpoint_auth_methods_supported"]),
        accepts_metadata_documents: metadata["client_id_metadata_document_supported"] == true,
        resource: resource_id,
        scope: scope(challenge, &resource, &metadata),
        sends_iss: metadata["authorization_response_iss_parameter_supported"] == true,
    })
}

/// The Protected Resource Metadata: where the challenge says, else at the server's path
/// (RFC 9728 §3.1), else at the root.
async fn protected_resource(
    http: &reqwest::Client,
    server: &Url,
    challenge: Option<&str>,
    local: bool,
) -> Result<Value, AuthError> {
    let what = "the Protected Resource Metadata";
    let named = challenge
        .and_then(|c| parameter(c, "resource_metadata"))
        .and_then(|u| Url::parse(&u).ok());
    if let Some(url) = named {
        secure(&url, local, "resource_metadata")?;
        return get_json(http, &url, what).await;
    }
    let at_path = well_known(server, "oauth-protected-resource");
    let mut root = at_path.clone();
    root.set_path("/.well-known/oauth-protected-resource");
    match get_json(http, &at_path, what).await {
        Err(AuthError::Discovery { .. }) if root != at_path => get_json(http, &root, what).await,
        found => found,
    }
}

/// The scopes to ask for: the challenge's, else those the resource supports; with
/// `offline_access` where the authorization server offers it (a refresh token then spares the
/// user another sign-in).
fn scope(challenge: Option<&str>, resource: &Value, metadata: &Value) -> String {
    let mut scope = challenge
        .and_then(|c| parameter(c, "scope"))
        .or_else(|| scopes(&resource["scopes_supported"]))
        .unwrap_or_default();
    let offered = metadata["scopes_supported"]
        .as_array()
        .is_some_and(|list| list.iter().any(|s| s == "offline_access"));
    if offered && !scope.split(' ').any(|s| s == "offline_access") {
        scope = [scope.as_str(), "offline_access"]
            .join(" ")
            .trim()
            .to_owned();
    }
    scope
}

/// RFC 9728 §3.3: the metadata must describe the server the bridge talks to (or a part of its
/// origin above it), or a token for another server (one the user trusts) could be asked for
/// and then sent here. The resource as the metadata writes it: the one to ask a token for.
fn check_resource(metadata: &Value, server: &Url) -> Result<String, AuthError> {
    let refused = || AuthError::Discovery {
        what: "the Protected Resource Metadata",
        reason: format!("its resource is not {server}"),
    };
    let named = metadata["resource"].as_str().ok_or_else(refused)?;
    let url = Url::parse(named).map_err(|_| refused())?;
    let path = url.path().trim_end_matches('/');
    let server_path = server.path().trim_end_matches('/');
    let above = server_path == path || server_path.starts_with(&format!("{path}/"));
    let same = url.origin() == server.origin() && above && url.fragment().is_none();
    if same {
        Ok(named.to_owned())
    } else {
        Err(refused())
    }
}

/// https, or http to this machine for a server on this machine: codes, verifiers and tokens
/// never travel in the clear.
fn secure(url: &Url, local: bool, name: &str) -> Result<(), AuthError> {
    let loopback_http = url.scheme() == "http" && local && grantry_base::net::is_loopback(url);
    if url.scheme() == "https" || loopback_http {
        return Ok(());
    }
    Err(AuthError::Discovery {
        what: "the authorization metadata",
        reason: format!("{name} is not https: {url}"),
    })
}

/// RFC 8414's metadata, else OpenID Connect discovery's, at the first of their places that
/// answers. An answer too large or not JSON ends the search: it is the server's answer.
async fn authorization_server(http: &reqwest::Client, issuer: &Url) -> Result<Value, AuthError> {
    let what = "the authorization server's metadata";
    let mut missing = missing_field(what, "metadata URL");
    for url in metadata_urls(issuer) {
        match get_json(http, &url, what).await {
            Err(error @ AuthError::Discovery { .. }) => missing = error,
            found => return found,
        }
    }
    Err(missing)
}

/// Where an issuer's metadata may be: RFC 8414's place, then OpenID Connect's with the path
/// inserted (as RFC 8414 does) and appended (as OpenID Connect Discovery does).
fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let mut urls = vec![
        well_known(issuer, "oauth-authorization-server"),
        well_known(issuer, "openid-configuration"),
    ];
    let path = issuer.path().trim_end_matches('/');
    if !path.is_empty() {
        let mut appended = issuer.clone();
        appended.set_path(&format!("{path}/.well-known/openid-configuration"));
        urls.push(appended);
    }
    urls
}

/// `/.well-known/NAME` inserted before the URL's path (RFC 8414 §3, RFC 9728 §3).
fn well_known(url: &Url, name: &str) -> Url {
    let mut known = url.clone();
    let path = url.path().trim_end_matches('/');
    known.set_path(&format!("/.well-known/{name}{path}"));
    known.set_query(None);
    known
}

async fn get_json(
    http: &reqwest::Client,
    url: &Url,
    what: &'static str,
) -> Result<Value, AuthError> {
    let failed = |reason: String| AuthError::Discovery { what, reason };
    let response = http
        .get(url.clone())
        .timeout(TIMEOUT)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| failed(grantry_base::net::transport_reason(&e)))?;
    if !response.status().is_success() {
        return Err(failed(format!("{url} answered HTTP {}", response.status())));
    }
    Ok(body::json(response, what, AUTH_ANSWER_BYTES).await?)
}

fn missing_field(what: &'static str, field: &str) -> AuthError {
    AuthError::Discovery {
        what,
        reason: format!("no usable {field}"),
    }
}

fn scopes(list: &Value) -> Option<String> {
    let names = strings(list);
    (!names.is_empty()).then(|| names.join(" "))
}

fn strings(list: &Value) -> Vec<String> {
    let list = list.as_array().map(Vec::as_slice).unwrap_or_default();
    list.iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// A parameter of a `WWW-Authenticate: Bearer` challenge (quoted or not).
pub(crate) fn parameter(challenge: &str, name: &str) -> Option<String> {
    let start = challenge.find(&format!("{name}="))? + name.len() + 1;
    let rest = &challenge[start..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => &quoted[..quoted.find('"')?],
        None => rest.split([',', ' ']).next()?,
    };
    Some(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::fake::{self, AS_PATH, Fake, PRM_PATH, Setup};
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn every_answer_of_discovery_is_read_within_the_bound() {
        let padded = |path| Setup {
            padded: Some(path),
            ..Setup::default()
        };
        for (path, what) in [
            (PRM_PATH, "the Protected Resource Metadata"),
            (AS_PATH, "the authorization server's metadata"),
        ] {
            let fake = Fake::start(padded(path)).await;
            let refused = discover(&fake::http(), &fake.server(), None).await;
            let refused = refused.err().expect("a padded answer is refused");
            assert_eq!(
                refused.to_string(),
                format!("{what} is larger than 256 KiB; not read")
            );
        }
    }

    #[tokio::test]
    async fn the_metadata_is_found_at_the_root_and_its_resource_and_issuer_kept_exactly() {
        let fake = Fake::start(Setup {
            prm_at_root: true,
            metadata: json!({"scopes_supported": ["invoices", "offline_access"]}),
            ..Setup::default()
        })
        .await;
        let endpoints = discover(
            &fake::http(),
            &fake.server(),
            Some(r#"Bearer scope="invoices""#),
        )
        .await
        .unwrap();
        assert_eq!(
            endpoints.resource, fake.base,
            "the origin, with no `/` added"
        );
        assert_eq!(endpoints.issuer, fake.base);
        assert_eq!(endpoints.scope, "invoices offline_access");
    }

    #[tokio::test]
    async fn metadata_whose_issuer_differs_even_by_a_slash_is_refused() {
        let slashed = Fake::start(Setup {
            issuer_suffix: "/",
            ..Setup::default()
        })
        .await;
        let refused = discover(&fake::http(), &slashed.server(), None).await;
        let refused = refused.err().expect("another issuer is refused");
        assert!(
            refused.to_string().contains("its issuer is not"),
            "{refused}"
        );
    }

    #[test]
    fn challenge_parameters_are_read_quoted_or_not() {
        let challenge = r#"Bearer error="invalid_token", resource_metadata="https://c.example/.well-known/oauth-protected-resource/mcp", scope="invoices profile""#;
        assert_eq!(
            parameter(challenge, "resource_metadata").unwrap(),
            "https://c.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(parameter(challenge, "scope").unwrap(), "invoices profile");
        assert_eq!(
            parameter("Bearer scope=invoices, x=y", "scope").unwrap(),
            "invoices"
        );
        assert!(parameter("Bearer", "scope").is_none());
    }

    #[test]
    fn metadata_for_another_server_or_in_the_clear_is_refused() {
        let server = Url::parse("https://c.example/mcp").unwrap();
        assert!(check_resource(&json!({"resource": "https://c.example/mcp"}), &server).is_ok());
        assert!(check_resource(&json!({"resource": "https://c.example/mcp/"}), &server).is_ok());
        assert!(check_resource(&json!({"resource": "https://bank.example/mcp"}), &server).is_err());
        assert!(check_resource(&json!({}), &server).is_err());
        let origin = check_resource(&json!({"resource": "https://c.example"}), &server);
        assert_eq!(origin.unwrap(), "https://c.example", "verbatim");
        assert!(check_resource(&json!({"resource": "https://c.example/mc"}), &server).is_err());
        assert!(check_resource(&json!({"resource": "https://c.example/mcp/x"}), &server).is_err());
        assert!(check_resource(&json!({"resource": "http://c.example/mcp"}), &server).is_err());
        assert!(
            check_resource(&json!({"resource": "https://c.example:8443/mcp"}), &server).is_err()
        );
        let plain = Url::parse("http://id.example/token").unwrap();
        assert!(secure(&plain, false, "token_endpoint").is_err());
        let local = Url::parse("http://127.0.0.1:9/token").unwrap();
        assert!(secure(&local, true, "token_endpoint").is_ok());
        assert!(secure(&local, false, "token_endpoint").is_err());
    }

    #[test]
    fn well_known_urls_go_before_the_path() {
        let server = Url::parse("https://c.example/mcp").unwrap();
        assert_eq!(
            well_known(&server, "oauth-protected-resource").as_str(),
            "https://c.example/.well-known/oauth-protected-resource/mcp"
        );
        let issuer = Url::parse("https://id.example/").unwrap();
        assert_eq!(
            well_known(&issuer, "oauth-authorization-server").as_str(),
            "https://id.example/.well-known/oauth-authorization-server"
        );
    }
}
