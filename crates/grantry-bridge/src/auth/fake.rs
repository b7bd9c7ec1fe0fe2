//! For the tests: a fake protected resource and authorization server on one loopback port
//! (its metadata, registration, authorization and token endpoints), which records what it is
//! sent and can pad any answer past the bridge's bounds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Form, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use url::Url;

pub(super) const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
const PRM_ROOT: &str = "/.well-known/oauth-protected-resource";
pub(super) const AS_PATH: &str = "/.well-known/oauth-authorization-server";

/// How the fake answers.
#[derive(Default, Clone)]
pub(super) struct Setup {
    /// A path whose answer is followed by 1 MiB of spaces (still valid JSON).
    pub(super) padded: Option<&'static str>,
    /// The Protected Resource Metadata at the root only, naming the origin as the resource.
    pub(super) prm_at_root: bool,
    /// Appended to the issuer in the authorization server's metadata (`/`: another issuer).
    pub(super) issuer_suffix: &'static str,
    /// Members added to (or replacing those of) the authorization server's metadata.
    pub(super) metadata: Value,
    /// Members added to the registration answer.
    pub(super) registration: Value,
    /// The user says no at the authorization endpoint.
    pub(super) deny: bool,
}

/// One request to the token endpoint.
#[derive(Clone, Debug)]
pub(super) struct TokenRequest {
    pub(super) form: HashMap<String, String>,
    pub(super) authorization: Option<String>,
}

struct Shared {
    setup: Setup,
    base: String,
    registrations: Mutex<Vec<Value>>,
    authorizations: Mutex<Vec<HashMap<String, String>>>,
    token_requests: Mutex<Vec<TokenRequest>>,
}

pub(super) struct Fake {
    /// `http://127.0.0.1:PORT`, the authorization server's issuer.
    pub(super) base: String,
    shared: Arc<Shared>,
}

impl Fake {
    pub(super) async fn start(setup: Setup) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Shared {
            setup,
            base: base.clone(),
            registrations: Mutex::new(Vec::new()),
            authorizations: Mutex::new(Vec::new()),
            token_requests: Mutex::new(Vec::new()),
        });
        let prm = if shared.setup.prm_at_root {
            PRM_ROOT
        } else {
            PRM_PATH
        };
        let app = axum::Router::new()
            .route(prm, get(resource_metadata))
            .route(AS_PATH, get(server_metadata))
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .with_state(Arc::clone(&shared));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { base, shared }
    }

    /// The protected resource: the fake's `/mcp`.
    pub(super) fn server(&self) -> Url {
        Url::parse(&format!("{}/mcp", self.base)).unwrap()
    }

    /// The registration requests' bodies.
    pub(super) fn registrations(&self) -> Vec<Value> {
        self.shared.registrations.lock().unwrap().clone()
    }

    /// The authorization requests' queries.
    pub(super) fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.shared.authorizations.lock().unwrap().clone()
    }

    pub(super) fn token_requests(&self) -> Vec<TokenRequest> {
        self.shared.token_requests.lock().unwrap().clone()
    }
}

/// A link opener that follows the fake's redirect back to the bridge's loopback listener, as
/// a browser would (curl, in a script under `dir`).
pub(super) fn follower(dir: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join("follow-link");
    std::fs::write(&path, "#!/bin/sh\nexec curl -sS -o /dev/null -L \"$1\"\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

/// An HTTP client as the bridge builds it.
pub(super) fn http() -> reqwest::Client {
    grantry_base::net::install_tls_provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// `value` as JSON, padded past every bound if `path` is the one to pad.
fn answer(shared: &Shared, path: &str, value: Value) -> Response {
    if shared.setup.padded != Some(path) {
        return Json(value).into_response();
    }
    let head = std::iter::once(value.to_string().into_bytes());
    let padding = std::iter::repeat_n(vec![b' '; 64 << 10], 16);
    let chunks = head.chain(padding).map(Ok::<_, std::io::Error>);
    let body = axum::body::Body::from_stream(futures::stream::iter(chunks));
    ([("content-type", "application/json")], body).into_response()
}

fn merged(mut base: Value, extra: &Value) -> Value {
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    base
}

async fn resource_metadata(State(shared): State<Arc<Shared>>) -> Response {
    let base = &shared.base;
    let (path, resource) = if shared.setup.prm_at_root {
        (PRM_ROOT, base.clone())
    } else {
        (PRM_PATH, format!("{base}/mcp"))
    };
    let metadata = json!({"resource": resource, "authorization_servers": [base]});
    answer(&shared, path, metadata)
}

async fn server_metadata(State(shared): State<Arc<Shared>>) -> Response {
    let base = &shared.base;
    let metadata = json!({
        "issuer": format!("{base}{}", shared.setup.issuer_suffix),
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "authorization_response_iss_parameter_supported": true,
    });
    answer(&shared, AS_PATH, merged(metadata, &shared.setup.metadata))
}

async fn register(State(shared): State<Arc<Shared>>, Json(asked): Json<Value>) -> Response {
    shared.registrations.lock().unwrap().push(asked);
    let registered = merged(
        json!({"client_id": "fake-client"}),
        &shared.setup.registration,
    );
    answer(&shared, "/register", registered)
}

/// Grants at once (or denies): back to the redirect URI with a code, the state and `iss`.
async fn authorize(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
) -> Redirect {
    let mut back = Url::parse(&query["redirect_uri"]).unwrap();
    let (name, value) = if shared.setup.deny {
        ("error", "access_denied")
    } else {
        ("code", "fake-code")
    };
    back.query_pairs_mut()
        .append_pair(name, value)
        .append_pair("state", &query["state"])
        .append_pair("iss", &shared.base);
    shared.authorizations.lock().unwrap().push(query);
    Redirect::to(back.as_str())
}

async fn token(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let authorization = headers
        .get("authorization")
        .map(|v| v.to_str().unwrap().to_owned());
    let mut requests = shared.token_requests.lock().unwrap();
    requests.push(TokenRequest {
        form,
        authorization,
    });
    let access = format!("fake-access-{}", requests.len());
    drop(requests);
    let tokens = json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600});
    answer(&shared, "/token", tokens)
}
