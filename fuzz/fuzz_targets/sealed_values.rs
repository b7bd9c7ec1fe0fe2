#![no_main]
//! Opening sealed values: the `requestState`, the connect link's ticket, the session cookie
//! and the login transaction cookie.
//!
//! The first byte picks what the rest is. Even: text presented where a sealed value is
//! expected (what anyone can send). Odd: a plaintext sealed under the right key and purpose
//! (what only a key holder could make), so the claims parsing and checks behind the
//! decryption are reached too. Nothing may panic, and text that was not sealed by grantry
//! never opens.

use axum::http::HeaderMap;
use grantry::connect::ticket::Ticket;
use grantry::identity::Principal;
use grantry::identity::oidc::login::LoginTransaction;
use grantry::identity::session;
use grantry::mcp_calls::rounds::request_state::{ArgumentsDigest, StateClaims, ToolRequest};
use grantry::seal::Purpose;
use grantry_fuzz::sealer;
use libfuzzer_sys::fuzz_target;
use serde_json::Map;

const NOW: i64 = 1_800_000_000;

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    let sealer = sealer();
    let presented = if mode % 2 == 0 {
        let text = String::from_utf8_lossy(rest).into_owned();
        [text.clone(), text.clone(), text.clone(), text]
    } else {
        [
            Purpose::RequestState,
            Purpose::SignInTicket,
            Purpose::BrowserSession,
            Purpose::LoginTransaction,
        ]
        .map(|purpose| sealer.seal_bytes(purpose, b"", rest))
    };
    let [state, ticket, session_cookie, login] = presented;
    let principal = Principal {
        issuer: "https://issuer.example".into(),
        subject: "alice".into(),
    };
    let opened = [
        StateClaims::open(
            sealer,
            &state,
            NOW,
            ToolRequest {
                principal: &principal,
                tool: "list_invoices",
                arguments: ArgumentsDigest::of_wire(&Map::new()),
            },
        )
        .is_ok(),
        Ticket::open(sealer, &ticket, NOW).is_ok(),
        session_read(&session_cookie),
        sealer
            .open_timed::<LoginTransaction>(Purpose::LoginTransaction, b"", &login, NOW)
            .is_ok(),
    ];
    if mode % 2 == 0 {
        assert_eq!(opened, [false; 4], "unsealed text opened");
    }
});

fn session_read(value: &str) -> bool {
    let mut headers = HeaderMap::new();
    let Ok(cookie) = format!("{}={value}", session::cookie_name(false)).parse() else {
        return false;
    };
    headers.insert("cookie", cookie);
    session::read(sealer(), &headers, NOW, false).is_some()
}
