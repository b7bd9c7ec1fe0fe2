//! The options of `grantry bridge`: the local stdio MCP server that talks to a remote one on
//! the user's behalf (see the [crate]). Flags only: clients launch it with arguments,
//! and some (Codex) pass it almost no environment. The one exception is a client secret,
//! which may come from a variable as well as a file, never from an argument (`ps` shows
//! those to every user of the machine).

use std::io::Read as _;
use std::path::Path;
use std::time::Duration;

use clap::Args;
use grantry_base::clock::seconds;
use grantry_base::net::is_loopback;
use http::{HeaderName, HeaderValue};
use secrecy::{ExposeSecret as _, SecretString};
use url::Url;

/// `grantry bridge URL [OPTIONS]`.
#[derive(Debug, Clone, Args)]
pub struct BridgeArgs {
    /// The remote server's MCP endpoint, e.g. `https://connector.example.com/mcp` (https, or
    /// http on a loopback address).
    #[arg(value_name = "URL", value_parser = server_url)]
    pub url: Url,

    /// The program that opens a sign-in link, run with the link as its one argument. Default:
    /// $BROWSER, else xdg-open (Linux), open (macOS) or rundll32's URL handler (Windows).
    /// Only https links are opened, without credentials, up to 4096 characters; plain http,
    /// and any link to this machine or a private network (loopback, private, link-local
    /// addresses, localhost names), only from a server on this machine.
    #[arg(long, value_name = "CMD")]
    pub open_with: Option<String>,

    /// When the bridge opens a sign-in link itself: `auto`, when the client did not declare
    /// that it shows URL elicitations (a client that did is asked to show it); `always`, also
    /// for such a client, for one that declares it and shows its person nothing. Either way
    /// the link is written to stderr (the client's log).
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = OpenLinks::Auto)]
    pub open_links: OpenLinks,

    /// No person is at this machine (a scheduled agent, a CI job): no browser is opened and
    /// no sign-in link or form question is passed on to the client; a call that needs one
    /// gets a tool error saying that no person can sign in here, and nothing is done.
    #[arg(long, conflicts_with_all = ["open_with", "open_links"])]
    pub no_browser: bool,

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

    /// The client id to authorize as, registered at the server's authorization server with
    /// the redirect URI `http://127.0.0.1/callback` (any port): a public client, or a
    /// confidential one with --client-secret-file. Default: --client-metadata-url where the
    /// authorization server accepts it, else a client registered dynamically.
    #[arg(long, value_name = "ID", conflicts_with = "client_metadata_url")]
    pub client_id: Option<String>,

    /// A file holding the secret of --client-id (trailing line end dropped; keep it 0600); or
    /// set GRANTRY_BRIDGE_CLIENT_SECRET. There is no option taking the secret itself: `ps`
    /// shows arguments to everyone. The bridge authenticates with it as the authorization
    /// server's metadata allows (client_secret_basic, else client_secret_post).
    #[arg(long, value_name = "PATH", requires = "client_id", value_parser = secret_file)]
    pub client_secret_file: Option<ClientSecret>,

    /// The URL of the bridge's Client ID Metadata Document (https, with a path), used as its
    /// client id where the authorization server says it accepts such documents; elsewhere a
    /// client is registered dynamically. The document must name the redirect URI
    /// `http://127.0.0.1/callback` and the token endpoint auth method `none`.
    #[arg(long, value_name = "URL", value_parser = metadata_url)]
    pub client_metadata_url: Option<Url>,

    /// Where tokens are kept, one 0600 file per server URL (a directory it creates is 0700).
    /// Default: grantry/bridge in the
    /// per-user config directory ($XDG_CONFIG_HOME or ~/.config; ~/Library/Application
    /// Support on macOS; %APPDATA% on Windows).
    #[arg(long, value_name = "DIR")]
    pub token_cache: Option<std::path::PathBuf>,
}

/// When the bridge opens a sign-in link in the browser itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OpenLinks {
    /// Only for a client that cannot show the link.
    Auto,
    /// For every client, also one that says it shows the link.
    Always,
}

/// The variable a client secret may come from instead of --client-secret-file.
pub const CLIENT_SECRET_VAR: &str = "GRANTRY_BRIDGE_CLIENT_SECRET";
/// Longer secret files are refused (and a FIFO or a device is not read at all).
const MAX_SECRET_BYTES: u64 = 4096;

impl BridgeArgs {
    /// The secret of --client-id: --client-secret-file's, else GRANTRY_BRIDGE_CLIENT_SECRET's.
    pub fn client_secret(&self) -> Option<ClientSecret> {
        let from_env = || {
            std::env::var(CLIENT_SECRET_VAR)
                .ok()
                .filter(|s| !s.is_empty())
        };
        self.client_secret_file
            .clone()
            .or_else(|| from_env().map(ClientSecret::new))
    }
}

/// A client secret; `Debug` never shows it.
#[derive(Clone, Debug)]
pub struct ClientSecret {
    secret: SecretString,
    /// Why the file it came from is a worry (others may read it), said once logging runs.
    readable_by_others: Option<String>,
}

impl ClientSecret {
    pub fn new(secret: String) -> Self {
        Self {
            secret: secret.into(),
            readable_by_others: None,
        }
    }

    pub fn expose(&self) -> &str {
        self.secret.expose_secret()
    }

    /// A warning for the log, if the file it came from is readable by others.
    pub fn file_warning(&self) -> Option<&str> {
        self.readable_by_others.as_deref()
    }
}

/// One `--header`: its value is marked sensitive, so `Debug` never shows it.
#[derive(Debug, Clone)]
pub struct StaticHeader {
    pub name: HeaderName,
    pub value: HeaderValue,
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

fn secret_file(path: &str) -> Result<ClientSecret, String> {
    let failed = |e: std::io::Error| format!("cannot read {path}: {e}");
    // Looked at before it is opened: opening a FIFO waits for a writer, for ever.
    if !std::fs::metadata(path).map_err(failed)?.is_file() {
        return Err(format!("{path} is not a regular file"));
    }
    let file = std::fs::File::open(path).map_err(failed)?;
    if !file.metadata().map_err(failed)?.is_file() {
        return Err(format!("{path} is not a regular file"));
    }
    let readable_by_others = grantry_base::private_files::readable_by_others(Path::new(path))
        .map_err(failed)?
        .map(|mode| format!("{path} is readable by group or others (mode {mode:o})"));
    let mut text = String::new();
    file.take(MAX_SECRET_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(failed)?;
    if text.len() as u64 > MAX_SECRET_BYTES {
        return Err(format!("{path} is longer than {MAX_SECRET_BYTES} bytes"));
    }
    let secret = text.trim_end_matches(['\r', '\n']);
    if secret.is_empty() {
        return Err(format!("{path} is empty"));
    }
    Ok(ClientSecret {
        readable_by_others,
        ..ClientSecret::new(secret.to_owned())
    })
}

/// A Client ID Metadata Document's URL: https, with a path, nothing else in it.
fn metadata_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
    if url.scheme() != "https" {
        return Err("a client metadata document URL is https".into());
    }
    if url.path() == "/" || url.fragment().is_some() || !url.username().is_empty() {
        return Err("a client metadata document URL has a path, and no fragment or user".into());
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
    fn a_client_secret_comes_from_a_regular_file_of_bounded_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, "s3cret\n").unwrap();
        let secret = secret_file(path.to_str().unwrap()).unwrap();
        assert_eq!(secret.expose(), "s3cret");
        assert!(!format!("{secret:?}").contains("s3cret"));
        std::fs::write(&path, "x".repeat(4097)).unwrap();
        assert!(secret_file(path.to_str().unwrap()).is_err());
        std::fs::write(&path, "\n").unwrap();
        assert!(secret_file(path.to_str().unwrap()).is_err());
        let device = secret_file("/dev/zero").unwrap_err();
        assert_eq!(device, "/dev/zero is not a regular file");
        assert!(secret_file(dir.path().to_str().unwrap()).is_err());
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("secret");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let path = fifo.to_str().unwrap().to_owned();
        let (said, heard) = std::sync::mpsc::channel();
        std::thread::spawn(move || said.send(secret_file(&path)));
        let refused = heard
            .recv_timeout(Duration::from_secs(5))
            .expect("answers at once, without a writer");
        assert!(refused.unwrap_err().ends_with("is not a regular file"));
    }

    #[test]
    fn a_secret_file_others_may_read_is_used_with_a_warning() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, "s3cret").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let private = secret_file(path.to_str().unwrap()).unwrap();
        assert_eq!(private.file_warning(), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let open = secret_file(path.to_str().unwrap()).unwrap();
        assert_eq!(open.expose(), "s3cret");
        let warning = open.file_warning().unwrap();
        assert!(warning.contains("mode 644"), "{warning}");
    }

    #[test]
    fn a_client_metadata_document_url_is_https_with_a_path() {
        assert!(metadata_url("https://app.example/client.json").is_ok());
        assert!(metadata_url("http://app.example/client.json").is_err());
        assert!(metadata_url("https://app.example/").is_err());
        assert!(metadata_url("https://app.example/c.json#x").is_err());
    }

    #[test]
    fn a_header_value_never_shows_in_debug_output() {
        let parsed = header("Authorization: Bearer sekrit").unwrap();
        assert_eq!(parsed.name, "authorization");
        assert!(!format!("{parsed:?}").contains("sekrit"));
        assert!(header("no colon").is_err());
    }
}
