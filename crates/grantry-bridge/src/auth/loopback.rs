//! The loopback redirect of a native app (RFC 8252 §7.3): a listener on 127.0.0.1 at a port
//! the system picks, for the one authorization response the browser brings back.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::response::Html;
use axum::routing::get;
use tokio::sync::mpsc;

pub(super) const PATH: &str = "/callback";

/// The query of the authorization response.
pub(super) type Response = HashMap<String, String>;

pub(super) struct Loopback {
    pub(super) redirect_uri: String,
    answers: mpsc::Receiver<Response>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Loopback {
    fn drop(&mut self) {
        // Whatever ended the sign-in (a code, a timeout, an error), the port closes with it.
        self.server.abort();
    }
}

impl Loopback {
    pub(super) async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let (sender, answers) = mpsc::channel(8);
        let app = axum::Router::new()
            .route(PATH, get(receive))
            .with_state(sender);
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            redirect_uri: format!("http://127.0.0.1:{port}{PATH}"),
            answers,
            server,
        })
    }

    /// The first authorization response that carries `state`: a request to the port with
    /// any other (another local program, a page guessing the port) does not end the sign-in.
    pub(super) async fn response(mut self, state: &str) -> Option<Response> {
        while let Some(response) = self.answers.recv().await {
            if response.get("state").map(String::as_str) == Some(state) {
                return Some(response);
            }
            tracing::warn!(
                "a request to the sign-in's loopback address without its state; ignored"
            );
        }
        None
    }
}

async fn receive(
    State(answers): State<mpsc::Sender<Response>>,
    Query(query): Query<Response>,
) -> Html<&'static str> {
    let failed = query.contains_key("error") || !query.contains_key("code");
    let _ = answers.try_send(query);
    if failed {
        Html(
            "<!doctype html><title>grantry bridge</title><h1>Not signed in</h1>\
             <p>The sign-in did not complete. You can close this tab.</p>",
        )
    } else {
        Html(
            "<!doctype html><title>grantry bridge</title><h1>Signed in</h1>\
             <p>grantry bridge has what it needs. You can close this tab.</p>",
        )
    }
}
