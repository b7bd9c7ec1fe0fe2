//! Which client the bridge authorizes as, and how it proves it at the token endpoint:
//! `--client-id` (confidential with its secret: `client_secret_basic` or `client_secret_post`,
//! as the authorization server's metadata allows), else the Client ID Metadata Document URL
//! where the authorization server accepts one, else a client registered dynamically (RFC 7591),
//! authenticating as its registration says.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use url::Url;

use super::discovery::{Endpoints, TIMEOUT};
use super::{AUTH_ANSWER_BYTES, AuthError};
use crate::args::ClientSecret;
use crate::body;

/// How the client authenticates at the token endpoint (RFC 8414's names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AuthMethod {
    /// A public client: its id in the form, nothing else.
    #[default]
    None,
    ClientSecretBasic,
    ClientSecretPost,
}

impl AuthMethod {
    fn named(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
        }
    }
}

/// The client of one authorization, kept with its tokens (for refreshes). A secret the user
/// configured is not kept: it is the configuration's, read at each start (a rotated file
/// reaches the next refresh); one a registration returned lives only here.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Client {
    pub(crate) client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: AuthMethod,
    /// Whether `client_secret` is the configured one.
    #[serde(skip)]
    configured: bool,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("client_id", &self.client_id)
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A public client: no secret.
    pub(super) fn public(client_id: String) -> Self {
        Self {
            client_id,
            client_secret: None,
            token_endpoint_auth_method: AuthMethod::None,
            configured: false,
        }
    }

    /// The client as a cache file keeps it: without a configured secret.
    pub(super) fn to_keep(&self) -> Self {
        Self {
            client_secret: self.client_secret.clone().filter(|_| !self.configured),
            ..self.clone()
        }
    }

    /// This cached client, if it is still the one `choice` names, with `choice`'s secret
    /// (the configuration's, as it is now); `None` when the user now names another client.
    pub(super) fn into_chosen(self, choice: &Choice) -> Option<Self> {
        let Some(chosen) = &choice.client_id else {
            // A client once configured with a secret, now named by nobody: its secret was not
            // kept, so it cannot refresh; a new sign-in chooses the client again.
            let lost_secret =
                self.client_secret.is_none() && self.token_endpoint_auth_method != AuthMethod::None;
            return (!lost_secret).then_some(self);
        };
        if *chosen != self.client_id {
            return None;
        }
        let secret = choice.secret.as_ref().map(|s| s.expose().to_owned());
        Some(Self {
            configured: secret.is_some(),
            client_secret: secret,
            ..self
        })
    }

    /// A token request to `endpoint` with `form`, as this client.
    pub(super) fn token_request(
        &self,
        http: &reqwest::Client,
        endpoint: &Url,
        form: &[(&str, &str)],
    ) -> reqwest::RequestBuilder {
        let mut form = form.to_vec();
        let secret = self.client_secret.as_deref().unwrap_or_default();
        let request = http.post(endpoint.clone()).timeout(TIMEOUT);
        match self.token_endpoint_auth_method {
            AuthMethod::ClientSecretBasic => {
                // RFC 6749 §2.3.1: each part form-encoded, then base64.
                let pair = format!("{}:{}", encoded(&self.client_id), encoded(secret));
                let basic = base64::engine::general_purpose::STANDARD.encode(pair);
                return request
                    .header(reqwest::header::AUTHORIZATION, format!("Basic {basic}"))
                    .form(&form);
            }
            AuthMethod::ClientSecretPost => {
                form.extend([("client_id", &*self.client_id), ("client_secret", secret)])
            }
            AuthMethod::None => form.push(("client_id", &self.client_id)),
        }
        request.form(&form)
    }
}

fn encoded(part: &str) -> String {
    url::form_urlencoded::byte_serialize(part.as_bytes()).collect()
}

/// The client the user chose, if any.
#[derive(Clone, Default)]
pub(crate) struct Choice {
    pub(crate) client_id: Option<String>,
    pub(crate) secret: Option<ClientSecret>,
    pub(crate) metadata_url: Option<Url>,
}

/// The client to authorize as at `endpoints`' authorization server.
pub(super) async fn client(
    http: &reqwest::Client,
    choice: &Choice,
    endpoints: &Endpoints,
    redirect_uri: &str,
) -> Result<Client, AuthError> {
    if let Some(client_id) = &choice.client_id {
        let Some(secret) = &choice.secret else {
            return Ok(Client::public(client_id.clone()));
        };
        return Ok(Client {
            client_id: client_id.clone(),
            client_secret: Some(secret.expose().to_owned()),
            token_endpoint_auth_method: secret_method(&endpoints.auth_methods),
            configured: true,
        });
    }
    match &choice.metadata_url {
        Some(url) if endpoints.accepts_metadata_documents => Ok(Client::public(url.to_string())),
        _ => register(http, endpoints, redirect_uri).await,
    }
}

/// A confidential client's method: Basic unless only post is offered (RFC 8414 §2: an
/// authorization server that lists none takes Basic).
fn secret_method(offered: &[String]) -> AuthMethod {
    let offers = |method: AuthMethod| offered.iter().any(|m| m == method.name());
    if offers(AuthMethod::ClientSecretPost) && !offers(AuthMethod::ClientSecretBasic) {
        AuthMethod::ClientSecretPost
    } else {
        AuthMethod::ClientSecretBasic
    }
}

/// The method to ask a registration for: a public client where the server takes one.
fn wanted_method(offered: &[String]) -> AuthMethod {
    let offers = |method: AuthMethod| offered.iter().any(|m| m == method.name());
    if offered.is_empty() || offers(AuthMethod::None) {
        AuthMethod::None
    } else if offers(AuthMethod::ClientSecretBasic) || !offers(AuthMethod::ClientSecretPost) {
        AuthMethod::ClientSecretBasic
    } else {
        AuthMethod::ClientSecretPost
    }
}

/// Registers a native client for `redirect_uri` (RFC 7591), as public as the server allows.
async fn register(
    http: &reqwest::Client,
    endpoints: &Endpoints,
    redirect_uri: &str,
) -> Result<Client, AuthError> {
    let endpoint = endpoints
        .registration_endpoint
        .as_ref()
        .ok_or(AuthError::NoRegistration)?;
    let wanted = wanted_method(&endpoints.auth_methods);
    let request = json!({
        "client_name": "grantry bridge",
        "application_type": "native",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted.name(),
    });
    let response = http
        .post(endpoint.clone())
        .timeout(TIMEOUT)
        .json(&request)
        .send()
        .await
        .map_err(|e| AuthError::Registration(grantry_base::net::transport_reason(&e)))?;
    let status = response.status();
    let body = match body::json(response, "the registration answer", AUTH_ANSWER_BYTES).await {
        Err(body::BodyError::NotJson { .. }) => Value::Null,
        read => read?,
    };
    match body["client_id"].as_str() {
        Some(id) if status.is_success() => registered(id, &body, wanted),
        _ => Err(AuthError::Registration(format!(
            "HTTP {status}, {}",
            body["error"].as_str().unwrap_or("no client_id")
        ))),
    }
}

/// The client a registration answer describes: its method as registered (else the one asked
/// for), with the secret that method needs.
fn registered(client_id: &str, answer: &Value, wanted: AuthMethod) -> Result<Client, AuthError> {
    let method = match answer["token_endpoint_auth_method"].as_str() {
        None => wanted,
        Some(name) => AuthMethod::named(name).ok_or_else(|| {
            AuthError::Registration(format!(
                "registered for {name}, which the bridge cannot use"
            ))
        })?,
    };
    let secret = answer["client_secret"].as_str().map(str::to_owned);
    if method != AuthMethod::None && secret.is_none() {
        return Err(AuthError::Registration(format!(
            "registered for {} without a client_secret",
            method.name()
        )));
    }
    Ok(Client {
        client_id: client_id.to_owned(),
        client_secret: secret.filter(|_| method != AuthMethod::None),
        token_endpoint_auth_method: method,
        configured: false,
    })
}

#[cfg(test)]
mod tests {
    use super::super::discovery::discover;
    use super::super::fake::{self, Fake, Setup};
    use super::*;

    const REDIRECT: &str = "http://127.0.0.1:1/callback";

    /// The client chosen at a fake set up with `setup`, the registrations it saw, and the
    /// token request that client then makes.
    async fn token_request_as(
        choice: &Choice,
        setup: Setup,
    ) -> (Client, Vec<Value>, fake::TokenRequest) {
        let fake = Fake::start(setup).await;
        let http = fake::http();
        let endpoints = discover(&http, &fake.server(), None).await.unwrap();
        let client = client(&http, choice, &endpoints, REDIRECT).await.unwrap();
        let form = [("grant_type", "authorization_code"), ("code", "c")];
        let sent = client.token_request(&http, &endpoints.token_endpoint, &form);
        assert!(sent.send().await.unwrap().status().is_success());
        (
            client,
            fake.registrations(),
            fake.token_requests().remove(0),
        )
    }

    fn offering(methods: &[&str], registration: Value) -> Setup {
        Setup {
            metadata: json!({"token_endpoint_auth_methods_supported": methods}),
            registration,
            ..Setup::default()
        }
    }

    fn pre_registered(secret: &str) -> Choice {
        Choice {
            client_id: Some("pre:registered".into()),
            secret: Some(ClientSecret::new(secret.into())),
            metadata_url: None,
        }
    }

    #[tokio::test]
    async fn a_pre_registered_confidential_client_authenticates_as_the_server_allows() {
        let setup = offering(&["client_secret_basic"], json!({}));
        let (_, registered, basic) = token_request_as(&pre_registered("s:cr t"), setup).await;
        assert!(registered.is_empty(), "no registration for --client-id");
        // RFC 6749 §2.3.1: form-encoded parts, then base64.
        let expected =
            base64::engine::general_purpose::STANDARD.encode("pre%3Aregistered:s%3Acr+t");
        assert_eq!(basic.authorization, Some(format!("Basic {expected}")));
        assert!(!basic.form.contains_key("client_secret"));
        let setup = offering(&["client_secret_post"], json!({}));
        let (_, _, post) = token_request_as(&pre_registered("s"), setup).await;
        assert_eq!(post.authorization, None);
        assert_eq!(post.form["client_id"], "pre:registered");
        assert_eq!(post.form["client_secret"], "s");
    }

    #[tokio::test]
    async fn a_registered_client_authenticates_as_its_registration_says() {
        let none = Choice::default();
        let secret = |method: &str| json!({"client_secret": "reg-secret", "token_endpoint_auth_method": method});
        let setup = offering(&["client_secret_basic"], secret("client_secret_basic"));
        let (_, registered, basic) = token_request_as(&none, setup).await;
        assert_eq!(
            registered[0]["token_endpoint_auth_method"],
            "client_secret_basic"
        );
        let expected = base64::engine::general_purpose::STANDARD.encode("fake-client:reg-secret");
        assert_eq!(basic.authorization, Some(format!("Basic {expected}")));
        // Asked for Basic, registered for post: the registration decides.
        let both = ["client_secret_basic", "client_secret_post"];
        let setup = offering(&both, secret("client_secret_post"));
        let (_, registered, post) = token_request_as(&none, setup).await;
        assert_eq!(
            registered[0]["token_endpoint_auth_method"],
            "client_secret_basic"
        );
        assert_eq!(post.form["client_secret"], "reg-secret");
        assert_eq!(post.authorization, None);
        // A secret given to a client that asked to be public is not used.
        let setup = offering(&["none"], json!({"client_secret": "unasked"}));
        let (_, registered, public) = token_request_as(&none, setup).await;
        assert_eq!(registered[0]["token_endpoint_auth_method"], "none");
        assert_eq!(public.form["client_id"], "fake-client");
        assert!(public.authorization.is_none() && !public.form.contains_key("client_secret"));
        assert_eq!(registered[0]["application_type"], "native");
    }

    #[tokio::test]
    async fn a_client_metadata_document_is_used_where_accepted_else_a_registration() {
        let url = "https://app.example/grantry-bridge.json";
        let choice = Choice {
            metadata_url: Some(Url::parse(url).unwrap()),
            ..Choice::default()
        };
        let accepting = Setup {
            metadata: json!({"client_id_metadata_document_supported": true}),
            ..Setup::default()
        };
        let (client, registered, sent) = token_request_as(&choice, accepting).await;
        assert_eq!(client.client_id, url);
        assert!(registered.is_empty());
        assert_eq!(sent.form["client_id"], url);
        let (client, registered, _) = token_request_as(&choice, Setup::default()).await;
        assert_eq!(client.client_id, "fake-client");
        assert_eq!(registered.len(), 1);
    }
}
