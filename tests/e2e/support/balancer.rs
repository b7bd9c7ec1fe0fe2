//! A tiny TCP load balancer on loopback: each connection goes to the next replica that
//! accepts it. It stands for the load balancer in front of a shared deployment, so replicas
//! can share one public URL while tests also reach each replica directly.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use tokio::net::{TcpListener, TcpStream};

pub struct Balancer {
    pub base: String,
    backends: Arc<RwLock<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Balancer {
    /// Listens on a free loopback port and forwards to `backends` (host:port), round robin.
    pub async fn start(backends: Vec<String>) -> Balancer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let next = Arc::new(AtomicUsize::new(0));
        let backends = Arc::new(RwLock::new(backends));
        let serving = backends.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let backends = serving.read().unwrap().clone();
                let next = next.clone();
                tokio::spawn(async move {
                    for _ in 0..backends.len() {
                        let i = next.fetch_add(1, Ordering::Relaxed) % backends.len();
                        if let Ok(mut outbound) = TcpStream::connect(&backends[i]).await {
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                            return;
                        }
                    }
                });
            }
        });
        Balancer {
            base,
            backends,
            task,
        }
    }

    /// Sends connections to `backend` (host:port) too, from now on: replicas started after
    /// the balancer, on ports of their own choosing, with its URL as their public URL.
    pub fn add(&self, backend: &str) {
        self.backends.write().unwrap().push(backend.to_owned());
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
