//! The loopback redirect of a native app (RFC 8252 §7.3): a listener on 127.0.0.1 at a port
//! the system picks, for the one authorization response the browser brings back.

use axum::extract::{Query, State};
use axum::response::Html;
use axum::routing::get;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

pub(super) const PATH: &str = "/callback";

/// The query of the authorization response.
pub(super) type Response = HashMap<String, String>;

pub(super) struct Loopback {
    pub(super) redirect_uri: String,
    answer: oneshot::Receiver<Response>,
    server: tokio::task::JoinHandle<()>,
}

type Slot = Arc<Mutex<Option<oneshot::Sender<Response>>>>;

impl Loopback {
    pub(super) async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let (sender, answer) = oneshot::channel();
        let slot: Slot = Arc::new(Mutex::new(Some(sender)));
        let app = axum::Router::new()
            .route(PATH, get(receive))
            .with_state(slot);
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            redirect_uri: format!("http://127.0.0.1:{port}{PATH}"),
            answer,
            server,
        })
    }

    /// The first authorization response that arrives.
    pub(super) async fn response(self) -> Option<Response> {
        let answer = self.answer.await.ok();
        self.server.abort();
        answer
    }
}

async fn receive(State(slot): State<Slot>, Query(query): Query<Response>) -> Html<&'static str> {
    if let Some(sender) = slot.lock().expect("slot lock is never poisoned").take() {
        let _ = sender.send(query);
    }
    Html(
        "<!doctype html><title>grantry bridge</title><h1>Signed in</h1>\
         <p>grantry bridge has what it needs. You can close this tab.</p>",
    )
}
