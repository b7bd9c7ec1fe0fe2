//! Load for the benchmark's browser scenario: whole sign-ins per second against a running
//! grantry with the demo provider and `dev` identity.
//!
//! Each worker repeats a person's sign-in: the connect page, Continue, the demo provider's
//! consent page, Approve, and the callback that redeems the code and stores the grant (five
//! requests to grantry, one token request inside it). Connect links are sealed here with the
//! server's key (`GRANTRY_KEYS`), as grantry seals them for an MCP caller; that keeps the
//! MCP round out of this measurement (it has its own scenario).
//!
//! `browser_rounds BASE_URL CONNECTIONS SECONDS` prints one JSON line: rounds, failures, the
//! p50/p99 of a whole round in microseconds, and of its callback request alone (the one that
//! redeems the code and stores the grant). `SECONDS` 0 makes one sign-in and exits
//! (non-zero if it failed): the benchmark uses it to connect the account before its
//! grant-present scenarios.

// Benchmark scaffolding, not product: an unwrap that fails is the run's failure, nothing here
// is anyone's API, and a run reads top to bottom, however long.
#![allow(clippy::unwrap_used, unreachable_pub, clippy::too_many_lines)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use grantry::connect::ticket::{Ticket, link};
use grantry::identity::{DEV_ISSUER, DEV_SUBJECT, Principal};
use grantry::seal::{KeyRing, Sealer, decode_key};
use reqwest::StatusCode;
use reqwest::redirect::Policy;

#[tokio::main]
async fn main() {
    grantry_base::net::install_tls_provider();
    let mut args = std::env::args().skip(1);
    let base = args.next().expect("BASE_URL");
    let connections: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(16);
    let seconds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let keys = std::env::var("GRANTRY_KEYS").expect("GRANTRY_KEYS: the server's sealing key");
    let key = decode_key(keys.split(',').next().unwrap()).expect("a sealing key");
    let sealer = Arc::new(Sealer::new(
        KeyRing::from_keys(&[key]).unwrap(),
        format!("{base}/mcp"),
    ));
    if seconds == 0 {
        if let Err(why) = sign_in(&base, &sealer).await {
            eprintln!("sign-in failed: {why}");
            std::process::exit(1);
        }
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..connections)
        .map(|_| {
            let (base, sealer, stop) = (base.clone(), sealer.clone(), stop.clone());
            tokio::spawn(async move {
                let mut times = Vec::new();
                let mut callbacks = Vec::new();
                let mut failures = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    match sign_in(&base, &sealer).await {
                        Ok(callback) => {
                            times.push(started.elapsed().as_micros() as u64);
                            callbacks.push(callback.as_micros() as u64);
                        }
                        Err(why) => {
                            failures += 1;
                            if failures == 1 {
                                eprintln!("round failed: {why}");
                            }
                        }
                    }
                }
                (times, callbacks, failures)
            })
        })
        .collect();
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut times = Vec::new();
    let mut callbacks = Vec::new();
    let mut failures = 0;
    for worker in workers {
        let (t, c, f) = worker.await.unwrap();
        times.extend(t);
        callbacks.extend(c);
        failures += f;
    }
    let elapsed = started.elapsed();
    times.sort_unstable();
    callbacks.sort_unstable();
    let percentile = |of: &[u64], p: usize| of.get(of.len() * p / 100).copied().unwrap_or(0);
    println!(
        r#"{{"requests":{},"duration_us":{},"p50_us":{},"p99_us":{},"callback_p50_us":{},"callback_p99_us":{},"status_errors":{},"socket_errors":0}}"#,
        times.len(),
        elapsed.as_micros(),
        percentile(&times, 50),
        percentile(&times, 99),
        percentile(&callbacks, 50),
        percentile(&callbacks, 99),
        failures
    );
}

/// One whole sign-in in a fresh browser (its own cookies); how long its callback took.
async fn sign_in(base: &str, sealer: &Sealer) -> Result<Duration, String> {
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let principal = Principal {
        issuer: DEV_ISSUER.to_owned(),
        subject: DEV_SUBJECT.to_owned(),
    };
    let ticket = Ticket::new(&principal, &"demo".parse().unwrap(), Default::default()).seal(
        sealer,
        unix_now(),
        600,
    );
    let connect = link(&base.parse()?, &ticket);
    let page = get(&browser, &connect, StatusCode::OK).await?;
    let authorize = submit(&browser, &connect, &page, None).await?;
    let consent = get(&browser, &authorize, StatusCode::OK).await?;
    let callback = submit(
        &browser,
        &authorize,
        &consent,
        Some(("decision", "approve")),
    )
    .await?;
    let called = Instant::now();
    let response = browser
        .get(&callback)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    match response.status() {
        StatusCode::SEE_OTHER => Ok(called.elapsed()),
        other => Err(format!("callback answered {other}")),
    }
}

async fn get(browser: &reqwest::Client, url: &str, want: StatusCode) -> Result<String, String> {
    let response = browser.get(url).send().await.map_err(|e| e.to_string())?;
    if response.status() != want {
        return Err(format!("GET {} answered {}", path(url), response.status()));
    }
    response.text().await.map_err(|e| e.to_string())
}

/// Submits the page's first form (with `extra` set) and returns where it redirected.
async fn submit(
    browser: &reqwest::Client,
    page_url: &str,
    page: &str,
    extra: Option<(&str, &str)>,
) -> Result<String, String> {
    let (action, mut fields) = first_form(page).ok_or("the page has no form")?;
    if let Some((name, value)) = extra {
        fields.retain(|(n, _)| n != name);
        fields.push((name.to_owned(), value.to_owned()));
    }
    let action = url::Url::parse(page_url)
        .and_then(|u| u.join(&action))
        .map_err(|e| e.to_string())?;
    let origin = action.origin().ascii_serialization();
    let response = browser
        .post(action.as_str())
        .header("origin", origin)
        .form(&fields)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if response.status() != StatusCode::SEE_OTHER {
        return Err(format!(
            "POST {} answered {}",
            path(action.as_str()),
            response.status()
        ));
    }
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .ok_or("a redirect without Location")?;
    Ok(action
        .join(location)
        .map_err(|e| e.to_string())?
        .to_string())
}

/// The first form's action and its named inputs, from the server's own simple markup.
fn first_form(page: &str) -> Option<(String, Vec<(String, String)>)> {
    let start = page.find("<form")?;
    let html = &page[start..start + page[start..].find("</form>")?];
    let action = attr(&html[..html.find('>')?], "action").unwrap_or_default();
    let fields = html
        .split("<input")
        .skip(1)
        .filter_map(|input| {
            let tag = &input[..input.find('>')?];
            Some((attr(tag, "name")?, attr(tag, "value").unwrap_or_default()))
        })
        .collect();
    Some((action, fields))
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(
        tag[start..end]
            .replace("&#38;", "&")
            .replace("&amp;", "&")
            .replace("&#34;", "\"")
            .replace("&quot;", "\""),
    )
}

fn path(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

fn unix_now() -> i64 {
    grantry_base::clock::unix_now()
}
