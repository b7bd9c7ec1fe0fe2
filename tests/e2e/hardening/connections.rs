//! Slow and silent connections (slowloris): deadlines on heads, bodies and idle keep-alive
//! connections, caps on open connections in all and per address, and the open-file limit.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server, legacy::LegacySession};

/// A connection to `server` from the loopback address `from` (127.0.0.x: another client).
async fn connect(server: &Server, from: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    let local: IpAddr = from.parse().unwrap();
    socket.bind(SocketAddr::new(local, 0)).unwrap();
    let target: SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    socket.connect(target).await.expect("the server accepts")
}

/// Reads until the server closes the connection; what it sent, and how long that took. A
/// connection still open after `patience` fails the test.
async fn until_closed(stream: &mut TcpStream, patience: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let read = tokio::time::timeout(patience, async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the connection was still open after {patience:?}"
    );
    (
        String::from_utf8_lossy(&received).into_owned(),
        started.elapsed(),
    )
}

fn healthz(server: &Server) -> String {
    let host = server.base.trim_start_matches("http://");
    format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n")
}

/// One request on a kept-alive connection; its answer's head and body.
async fn ask(stream: &mut TcpStream, request: &str) -> String {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
        .await
        .expect("an answer")
        .unwrap();
    String::from_utf8_lossy(&buffer[..n]).into_owned()
}

/// A client from `from` (any loopback address) that times out rather than waiting forever.
fn client_from(from: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(from.parse::<IpAddr>().unwrap())
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

#[tokio::test]
async fn silent_and_half_sent_heads_are_closed_after_the_header_read_timeout() {
    let server = Server::start(&["--header-read-timeout", "1"]).await;
    let mut silent = connect(&server, "127.0.0.1").await;
    let mut half = connect(&server, "127.0.0.1").await;
    half.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    for stream in [&mut silent, &mut half] {
        let (_, took) = until_closed(stream, Duration::from_secs(10)).await;
        assert!(took <= Duration::from_secs(4), "closed after {took:?}");
    }
    let metrics = server.metrics().await;
    assert!(
        metrics.contains(r#"grantry_connections_expired_total{deadline="header"} 2"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_kept_alive_connection_waits_the_idle_timeout_not_the_header_one() {
    let server = Server::start(&["--header-read-timeout", "1", "--idle-timeout", "3"]).await;
    let mut stream = connect(&server, "127.0.0.1").await;
    assert!(
        ask(&mut stream, &healthz(&server))
            .await
            .starts_with("HTTP/1.1 200")
    );
    // Past the header-read timeout, the idle connection still takes a request.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    assert!(
        ask(&mut stream, &healthz(&server))
            .await
            .starts_with("HTTP/1.1 200")
    );
    let (_, took) = until_closed(&mut stream, Duration::from_secs(10)).await;
    assert!(
        (Duration::from_millis(2500)..=Duration::from_secs(6)).contains(&took),
        "closed after {took:?}, idle timeout 3 s"
    );
}

#[tokio::test]
async fn a_body_sent_too_slowly_gets_408_and_its_connection_is_closed() {
    let server = Server::start(&["--body-read-timeout", "2"]).await;
    let host = server.base.trim_start_matches("http://").to_owned();
    let mut mcp = connect(&server, "127.0.0.1").await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{{"
    );
    mcp.write_all(head.as_bytes()).await.unwrap();
    let (answer, took) = until_closed(&mut mcp, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("-32600"), "{answer}");
    assert!(took <= Duration::from_secs(5), "answered after {took:?}");

    // A browser route that reads a form has the same deadline.
    let mut form = connect(&server, "127.0.0.1").await;
    let head = format!(
        "POST /connect/v1.x HTTP/1.1\r\nHost: {host}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\ncsrf="
    );
    form.write_all(head.as_bytes()).await.unwrap();
    let (answer, took) = until_closed(&mut form, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
    assert!(took <= Duration::from_secs(5), "answered after {took:?}");
}

#[tokio::test]
async fn one_address_flooding_slow_connections_leaves_another_client_served_within_a_second() {
    // A file limit below the flood: without a per-address cap the flood takes every
    // descriptor and nobody else is accepted.
    let server = Server::start_after(
        "ulimit -n 400",
        &[
            "--max-connections-per-address",
            "50",
            "--header-read-timeout",
            "60",
        ],
    )
    .await;
    let mut flood = Vec::new();
    for _ in 0..450 {
        let mut stream = connect(&server, "127.0.0.1").await;
        let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\nX-Slow: ").await;
        flood.push(stream);
    }
    let other = client_from("127.0.0.2");
    let started = Instant::now();
    let health = other
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .expect("/healthz answers another client");
    assert_eq!(health.status(), 200);
    let mcp = other
        .post(server.mcp_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                   "params": {"_meta": crate::support::mcp::meta(json!({}))}})
            .to_string(),
        )
        .send()
        .await
        .expect("/mcp answers another client");
    assert_eq!(mcp.status(), 200);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(1), "answered after {took:?}");

    // The flooding address's next connection is turned away at once.
    let mut refused = connect(&server, "127.0.0.1").await;
    let (answer, took) = until_closed(&mut refused, Duration::from_secs(2)).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    let metrics = String::from_utf8(
        other
            .get(format!("{}/metrics", server.base))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    assert!(
        metrics.contains(r#"grantry_connections_refused_total{cap="address"}"#),
        "{metrics}"
    );
    drop(flood);
}

#[tokio::test]
async fn at_the_total_cap_new_connections_are_refused_fast_while_open_ones_go_on() {
    let server = Server::start(&[
        "--max-connections",
        "20",
        "--max-connections-per-address",
        "1000",
        "--header-read-timeout",
        "2",
    ])
    .await;
    // A client whose kept-alive connection is open before the cap is reached.
    let early = client_from("127.0.0.2");
    let url = format!("{}/healthz", server.base);
    assert_eq!(early.get(&url).send().await.unwrap().status(), 200);
    let mut silent = Vec::new();
    for _ in 0..19 {
        silent.push(connect(&server, "127.0.0.1").await);
    }
    let mut refused = connect(&server, "127.0.0.3").await;
    let (answer, took) = until_closed(&mut refused, Duration::from_secs(2)).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    // The connection already open is served.
    assert_eq!(early.get(&url).send().await.unwrap().status(), 200);
    // Once the silent ones pass their header deadline, there is room again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let later = client_from("127.0.0.3");
    assert_eq!(later.get(&url).send().await.unwrap().status(), 200);
}

/// Deadlines short enough that any stream below would be cut if it counted as idle.
const SHORT_DEADLINES: [&str; 6] = [
    "--header-read-timeout",
    "1",
    "--idle-timeout",
    "1",
    "--retry-hold",
    "8",
];

#[tokio::test]
async fn a_held_retry_streams_past_the_idle_timeout_and_completes() {
    let server = Server::start(&SHORT_DEADLINES).await;
    let mcp = std::sync::Arc::new(Mcp::new(server.mcp_url()));
    let (link, state, key) = mcp.first_round().await;
    let waiting = mcp.held_retry(key, state);
    tokio::time::sleep(Duration::from_secs(3)).await;
    Browser::new().sign_in(&link, true).await;
    let answer = waiting.await.unwrap();
    assert!(answer.is_sse(), "{}", answer.raw);
    assert_eq!(answer.result()["resultType"], "complete", "{}", answer.raw);
}

#[tokio::test]
async fn a_legacy_get_stream_open_past_the_idle_timeout_still_delivers() {
    let server = Server::start(&SHORT_DEADLINES).await;
    let session = LegacySession::open(&server.mcp_url(), None, url_and_form()).await;
    let listening = session
        .listen_for(
            "notifications/elicitation/complete",
            Duration::from_secs(20),
        )
        .await;
    let first = session.call_tool("list_invoices", json!({})).await;
    let url = first.body["error"]["data"]["elicitations"][0]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("a sign-in link: {}", first.raw))
        .to_owned();
    tokio::time::sleep(Duration::from_secs(3)).await;
    Browser::new().sign_in(&url, true).await;
    assert!(
        listening.await.unwrap().is_some(),
        "elicitation/complete arrived on a GET stream older than the idle timeout"
    );
}

#[tokio::test]
async fn the_open_file_limit_is_raised_to_the_hard_limit_and_logged() {
    let server = Server::start_after("ulimit -S -n 300", &[]).await;
    assert!(
        server.log_shows("open-file limit raised").await,
        "{}",
        server.log()
    );
    assert!(server.log().contains("raised_from=300"), "{}", server.log());
}
