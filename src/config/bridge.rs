//! The options of `grantry bridge`: the local stdio MCP server that talks to a remote one on
//! the user's behalf (see [`crate::bridge`]). Flags only: clients launch it with arguments,
//! and some (Codex) pass it almost no environment.

use std::time::Duration;

use clap::Args;
use http::{HeaderName, HeaderValue};
use url::Url;

use super::values::seconds;

/// `grantry bridge URL [OPTIONS]`.
#[derive(Debug, Clone, Args)]
pub struct BridgeArgs {
    /// The remote server's MCP endpoint, e.g. `https://connector.example.com/mcp` (https, or
    /// http on a loopback address).
    #[arg(value_name = "URL", value_parser = server_url)]
    pub url: Url,

    /// The program that opens a sign-in link, run with the link as its one argument. Default:
    /// $BROWSER, else xdg-open (Linux), open (macOS) or rundll32's URL handler (Windows).
    #[arg(long, value_name = "CMD")]
    pub open_with: Option<String>,

    /// How long one tool call waits for a sign-in to land before it is answered with the link
    /// and "ask again once the page says the account is connected". Keep it under the
    /// client's tool-call timeout (60 s in several clients).
    #[arg(long, value_name = "SECONDS", default_value = "50", value_parser = seconds(1, 3600))]
    pub wait: Duration,

    /// A header sent with every request to the server, as "Name: value" (repeatable). A
    /// static `Authorization` here turns the bridge's own MCP authorization off. Its value is
    /// never logged.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = header)]
    pub headers: Vec<StaticHeader>,

    /// The public client id to authorize as, registered at the server's authorization server
    /// with the redirect URI `http://127.0.0.1/callback` (any port). Default: register one
    /// dynamically where the authorization server allows it.
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,

    /// Where tokens are kept, one 0600 file per server URL (a directory it creates is 0700).
    /// Default: grantry/bridge in the
    /// per-user config directory ($XDG_CONFIG_HOME or ~/.config; ~/Library/Application
    /// Support on macOS; %APPDATA% on Windows).
    #[arg(long, value_name = "DIR")]
    pub token_cache: Option<std::path::PathBuf>,
}

/// One `--header`: its value is marked sensitive, so `Debug` never shows it.
#[derive(Debug, Clone)]
pub struct StaticHeader {
    pub name: HeaderName,
    pub value: HeaderValue,
}

/// Whether `url` names this machine (a loopback address, or `localhost`): where plain http
/// is acceptable, for the server and for the links the bridge opens.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

fn server_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        "http" => return Err("http is for loopback addresses only; use https".into()),
        other => return Err(format!("the scheme must be https, not {other}")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("credentials in the URL are not accepted; use --header".into());
    }
    Ok(url)
}

fn header(text: &str) -> Result<StaticHeader, String> {
    let (name, value) = text.split_once(':').ok_or("expected \"Name: value\"")?;
    let name = HeaderName::try_from(name.trim()).map_err(|e| format!("header name: {e}"))?;
    let mut value =
        HeaderValue::try_from(value.trim()).map_err(|_| "the header value is not valid")?;
    value.set_sensitive(true);
    Ok(StaticHeader { name, value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_url_is_https_or_loopback_http_without_credentials() {
        assert!(server_url("https://connector.example.com/mcp").is_ok());
        assert!(server_url("http://127.0.0.1:8080/mcp").is_ok());
        assert!(server_url("http://localhost:8080/mcp").is_ok());
        assert!(server_url("http://[::1]:8080/mcp").is_ok());
        assert!(server_url("http://connector.example.com/mcp").is_err());
        assert!(server_url("ftp://connector.example.com/mcp").is_err());
        assert!(server_url("https://user:pw@connector.example.com/mcp").is_err());
        assert!(server_url("not a url").is_err());
    }

    #[test]
    fn a_header_value_never_shows_in_debug_output() {
        let parsed = header("Authorization: Bearer sekrit").unwrap();
        assert_eq!(parsed.name, "authorization");
        assert!(!format!("{parsed:?}").contains("sekrit"));
        assert!(header("no colon").is_err());
    }
}
