//! What a person reads: pages in the browser's language (`Accept-Language`, else
//! `--default-language`; an unknown one gives English), MCP messages in the default language,
//! and the deployment's brand (name, logo, colour, support link) on every page and in the
//! elicitation message. A logo that is no image, or too large, and a colour too light to read
//! stop the start with the reason.

use std::process::Command;

use reqwest::StatusCode;

use crate::support::server::exit_of;
use crate::support::{Mcp, Server};

/// A page as a browser asking for `language` gets it: (status, `Content-Language`-free body).
async fn page_in(url: &str, language: Option<&str>) -> (StatusCode, String) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(language) = language {
        request = request.header("accept-language", language);
    }
    let response = request.send().await.unwrap();
    let vary = response.headers().get("vary").cloned();
    assert!(
        vary.is_some_and(|v| v.to_str().unwrap().contains("accept-language")),
        "pages vary by language"
    );
    (response.status(), response.text().await.unwrap())
}

/// The first round of `list_invoices` without a connection: its link and the message the
/// client shows with it.
async fn sign_in_request(mcp: &Mcp) -> (String, String) {
    let round = mcp
        .call_tool(
            "list_invoices",
            serde_json::json!({}),
            crate::support::mcp::url_and_form(),
        )
        .await;
    let (link, _, key) = round.sign_in_round();
    let message = round.result()["inputRequests"][key]["params"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    (link, message)
}

#[tokio::test]
async fn pages_speak_the_browsers_language_and_english_otherwise() {
    let server = Server::start(&[]).await;
    let connections = format!("{}/connections", server.base);
    let expect = [
        (Some("de-DE,de;q=0.9,en;q=0.5"), "de", "Ihre Verbindungen"),
        (Some("fr-CA"), "fr", "Vos connexions"),
        (Some("es, it;q=0.8"), "en", "Your connections"),
        (None, "en", "Your connections"),
    ];
    for (asked, lang, heading) in expect {
        let (status, body) = page_in(&connections, asked).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            body.contains(&format!("<html lang=\"{lang}\">")),
            "{asked:?}: {body}"
        );
        assert!(body.contains(heading), "{asked:?}: {body}");
    }

    // The connect page and an error page, in German.
    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    let (_, connect) = page_in(&link, Some("de")).await;
    assert!(
        connect.contains("Ihr Demo Billing-Konto verbinden"),
        "{connect}"
    );
    assert!(connect.contains("Weiter zu Demo Billing"), "{connect}");
    let (status, broken) =
        page_in(&format!("{}/connect/not-a-ticket", server.base), Some("fr")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        broken.contains("Ce lien de connexion n&#x27;est pas valide")
            || broken.contains("Ce lien de connexion n&#39;est pas valide"),
        "{broken}"
    );
}

#[tokio::test]
async fn the_default_language_speaks_for_mcp_and_for_browsers_asking_none() {
    let server = Server::start(&["--default-language", "fr"]).await;
    let (_, body) = page_in(&format!("{}/connections", server.base), None).await;
    assert!(body.contains("Vos connexions"), "{body}");
    let (_, body) = page_in(&format!("{}/connections", server.base), Some("de")).await;
    assert!(
        body.contains("Ihre Verbindungen"),
        "the browser's choice wins: {body}"
    );
    let (_, message) = sign_in_request(&Mcp::new(server.mcp_url())).await;
    assert!(
        message
            .starts_with("Connectez votre compte Demo Billing pour que grantry puisse l'utiliser."),
        "{message}"
    );
}

/// A PNG of one pixel.
const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

#[tokio::test]
async fn the_brand_is_on_every_page_and_in_the_elicitation() {
    let dir = tempfile::tempdir().unwrap();
    let logo = dir.path().join("logo.png");
    std::fs::write(&logo, PIXEL_PNG).unwrap();
    let server = Server::start(&[
        "--brand-name",
        "Acme Books",
        "--brand-logo",
        logo.to_str().unwrap(),
        "--brand-color",
        "#7a1f5c",
        "--support-url",
        "https://help.acme.example/grantry",
    ])
    .await;
    let (link, message) = sign_in_request(&Mcp::new(server.mcp_url())).await;
    assert!(message.contains("so Acme Books can act on it"), "{message}");

    for url in [
        link.clone(),
        format!("{}/connections", server.base),
        format!("{}/connect/not-a-ticket", server.base),
    ] {
        let (_, body) = page_in(&url, None).await;
        assert!(
            body.contains("<span class=\"brand-name\">Acme Books</span>"),
            "{url}: {body}"
        );
        assert!(body.contains("<img src=\"/assets/brand-logo\""), "{url}");
        assert!(
            body.contains("href=\"https://help.acme.example/grantry\""),
            "{url}"
        );
        assert!(body.contains("· Acme Books</title>"), "{url}");
        assert!(!body.contains(">grantry<"), "{url}: no vendor name");
    }
    let (_, connect) = page_in(&link, None).await;
    assert!(connect.contains("through Acme Books."), "{connect}");

    let http = reqwest::Client::new();
    let css = http
        .get(format!("{}/assets/grantry.css", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        css.contains("--accent: #7a1f5c; --on-accent: #ffffff;"),
        "{css}"
    );
    let served = http
        .get(format!("{}/assets/brand-logo", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(served.headers()["content-type"], "image/png");
    assert!(
        served.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("sandbox")
    );
    assert_eq!(&served.bytes().await.unwrap()[..], PIXEL_PNG);
}

#[tokio::test]
async fn no_logo_is_served_without_one() {
    let server = Server::start(&[]).await;
    let status = reqwest::get(format!("{}/assets/brand-logo", server.base))
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, body) = page_in(&format!("{}/connections", server.base), None).await;
    assert!(!body.contains("brand-logo"), "{body}");
    assert!(!body.contains("<footer>"), "no support link by default");
}

#[test]
fn a_logo_that_is_no_image_or_too_large_and_a_light_colour_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let start = |args: &[&str]| {
        let out = exit_of(
            Command::new(env!("CARGO_BIN_EXE_grantry"))
                .args(["--data-dir", data.to_str().unwrap()])
                .args(args)
                .env_remove("GRANTRY_KEYS"),
        );
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let text = dir.path().join("logo.png");
    std::fs::write(&text, "<html>not an image</html>").unwrap();
    let big = dir.path().join("big.png");
    let mut bytes = PIXEL_PNG.to_vec();
    bytes.resize(300 * 1024, 0);
    std::fs::write(&big, bytes).unwrap();
    let (text, big) = (text.to_str().unwrap(), big.to_str().unwrap());
    // (the setting, its value, words the refusal must say)
    let refused = [
        (
            "--brand-logo",
            text,
            "is not a PNG, JPEG, WebP or SVG image",
        ),
        ("--brand-logo", big, "at most 262144 bytes"),
        // A device (or a FIFO) would hang the start or read without end.
        ("--brand-logo", "/dev/zero", "not a regular file"),
        (
            "--support-url",
            "https://help:hunter2@support.example/",
            "must not carry a user name or password",
        ),
        ("--brand-color", "#ffcc00", "too light"),
        ("--brand-color", "red", "#RRGGBB"),
        ("--default-language", "es", "en, de, fr"),
    ];
    for (setting, value, words) in refused {
        let said = start(&[setting, value]);
        assert!(
            said.contains(setting) && said.contains(words),
            "{setting} {value}: {said}"
        );
    }
    assert!(!data.join("grantry.db").exists(), "nothing was written");
}

/// Each `<time datetime="…">…</time>` of a page: (what machines read, what people read).
fn times(body: &str) -> Vec<(String, String)> {
    body.split("<time datetime=\"")
        .skip(1)
        .map(|rest| {
            let (datetime, rest) = rest.split_once("\">").unwrap();
            let (text, _) = rest.split_once("</time>").unwrap();
            (datetime.to_owned(), text.to_owned())
        })
        .collect()
}

/// An RFC 3339 time (`2026-12-05T14:03:09Z`) as a reader of `lang` reads it.
fn as_read(lang: &str, datetime: &str) -> String {
    let months = match lang {
        "de" => [
            "Januar",
            "Februar",
            "März",
            "April",
            "Mai",
            "Juni",
            "Juli",
            "August",
            "September",
            "Oktober",
            "November",
            "Dezember",
        ],
        "fr" => [
            "janvier",
            "février",
            "mars",
            "avril",
            "mai",
            "juin",
            "juillet",
            "août",
            "septembre",
            "octobre",
            "novembre",
            "décembre",
        ],
        _ => [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ],
    };
    let year = &datetime[..4];
    let month = months[datetime[5..7].parse::<usize>().unwrap() - 1];
    let day: u32 = datetime[8..10].parse().unwrap();
    let time = &datetime[11..16];
    match (lang, day) {
        ("de", _) => format!("{day}. {month} {year}, {time} UTC"),
        ("fr", 1) => format!("1er {month} {year} à {time} UTC"),
        ("fr", _) => format!("{day} {month} {year} à {time} UTC"),
        _ => format!("{day} {month} {year}, {time} UTC"),
    }
}

#[tokio::test]
async fn the_connections_page_writes_dates_as_its_reader_does() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, _) = sign_in_request(&mcp).await;
    crate::support::Browser::new()
        .sign_in(&link, true)
        .await
        .assert_connected();
    // Used once: "last used" has a date too.
    let used = mcp
        .call_tool(
            "list_invoices",
            serde_json::json!({}),
            crate::support::mcp::url_and_form(),
        )
        .await;
    assert_eq!(used.result()["isError"], false, "{}", used.raw);
    let connections = format!("{}/connections", server.base);
    for lang in ["en", "de", "fr"] {
        let (_, body) = page_in(&connections, Some(lang)).await;
        let shown = times(&body);
        assert_eq!(shown.len(), 2, "connected since and last used: {body}");
        for (datetime, text) in shown {
            assert!(
                datetime.len() == 20 && datetime.ends_with('Z'),
                "RFC 3339 for machines: {datetime}"
            );
            assert_eq!(text, as_read(lang, &datetime), "{lang}");
        }
    }
}
