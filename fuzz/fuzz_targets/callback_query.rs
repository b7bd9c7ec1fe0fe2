#![no_main]
//! The OAuth callback's query: any bytes after `GET /oauth/callback?`, through the whole app
//! (query parsing, the state's lookup in the store, the pages). No input gets a 5xx, and no
//! input gets a redirect: without a flow started from grantry, nothing may send the browser on.

use axum::body::Body;
use axum::http::Request;
use grantry_fuzz::{HOST, harness};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|query: &[u8]| {
    // Bytes a URI cannot carry are percent-encoded, as a browser would send them.
    let query: String = query
        .iter()
        .map(|&b| match b {
            b'!'..=b'~' if b != b'#' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let Ok(request) = Request::get(format!("/oauth/callback?{query}"))
        .header("host", HOST)
        .body(Body::empty())
    else {
        return;
    };
    let (response, page) = harness().send(request);
    let status = response.status();
    assert!(
        status.is_client_error() || status.is_success(),
        "the callback answered {status}: {}",
        String::from_utf8_lossy(&page)
    );
});
