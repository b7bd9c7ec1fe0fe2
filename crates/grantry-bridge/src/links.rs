//! Sign-in links: which ones the bridge will open (https; http only to this machine, and only
//! from a server on this machine; nothing on this machine or a private network from a remote
//! server; no credentials; not absurdly long), and opening them in the user's browser.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::process::Stdio;

use url::{Host, Url};

/// Longer links are refused: no sign-in page needs one, and a terminal or an opener may not
/// take it whole.
pub(super) const MAX_LINK_LENGTH: usize = 4096;

/// Why a link from the server is not opened.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(super) enum LinkRefusal {
    #[error("the link is {0} characters long (at most {MAX_LINK_LENGTH})")]
    TooLong(usize),
    #[error("the link is not a URL")]
    NotAUrl,
    #[error("the link's scheme is {0:?}; only https (or http to this machine) is opened")]
    Scheme(String),
    #[error(
        "the link is plain http; only https is opened (http only to this machine, from a server on this machine)"
    )]
    PlainHttp,
    #[error("the link carries a user name or password")]
    Credentials,
    #[error(
        "the link is to this machine or a private network ({0}); only a server on this machine may send one"
    )]
    NearHost(String),
}

/// A link that may be opened. Plain http is for a server on this machine (`local`) linking to
/// this machine; a remote server must not steer the browser at local services or at the
/// user's network at all (a router's page, a cloud metadata address), whatever the scheme.
pub(super) fn check(link: &str, local: bool) -> Result<Url, LinkRefusal> {
    if link.len() > MAX_LINK_LENGTH {
        return Err(LinkRefusal::TooLong(link.len()));
    }
    let url = Url::parse(link).map_err(|_| LinkRefusal::NotAUrl)?;
    match url.scheme() {
        "https" => {}
        "http" if local && grantry_base::net::is_loopback(&url) => {}
        "http" => return Err(LinkRefusal::PlainHttp),
        other => return Err(LinkRefusal::Scheme(other.to_owned())),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(LinkRefusal::Credentials);
    }
    if !local && is_near(&url) {
        return Err(LinkRefusal::NearHost(
            url.host_str().unwrap_or_default().to_owned(),
        ));
    }
    Ok(url)
}

/// Whether the link's host is this machine or a network near it, by address (IPv4 inside
/// IPv6 too) or by name (`localhost` and its subdomains, with or without the final dot).
fn is_near(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => near_v4(ip),
        Some(Host::Ipv6(ip)) => near_v6(ip) || ip.to_ipv4().is_some_and(near_v4),
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        None => true,
    }
}

/// Loopback, private, shared (carrier-grade NAT), link-local, unspecified or broadcast.
fn near_v4(ip: Ipv4Addr) -> bool {
    let [first, second, ..] = ip.octets();
    let shared = first == 100 && (64..128).contains(&second);
    ip.is_loopback()
        || ip.is_private()
        || shared
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
}

/// Loopback, unspecified, unique local (fc00::/7) or link-local (fe80::/10).
fn near_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback() || ip.is_unspecified() || first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfe80
}

/// Why the browser could not be started.
#[derive(Debug, thiserror::Error)]
#[error("could not run {program}: {source}")]
pub(super) struct OpenError {
    program: String,
    source: std::io::Error,
}

/// Opens `link` with `open_with`, else `$BROWSER`, else the platform's opener. Does not wait
/// for the browser: the program is reaped in the background.
pub(super) fn open(link: &Url, open_with: Option<&str>) -> Result<(), OpenError> {
    let (program, args) = opener(open_with);
    let mut command = tokio::process::Command::new(&program);
    command
        .args(args)
        .arg(link.as_str())
        .stdin(Stdio::null())
        // stdout is the MCP stream: nothing else may write there.
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // A group of its own: a client that stops the bridge with its process group does not
    // close the page the user is signing in on.
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|source| OpenError {
        program: program.clone(),
        source,
    })?;
    tokio::spawn(async move {
        match child.wait().await {
            Ok(status) if !status.success() => {
                tracing::warn!(%program, %status, "the link opener failed");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(%program, error = %e, "the link opener was lost"),
        }
    });
    Ok(())
}

/// The program and its leading arguments.
fn opener(open_with: Option<&str>) -> (String, Vec<&'static str>) {
    if let Some(program) = open_with {
        return (program.to_owned(), Vec::new());
    }
    // $BROWSER may list several programs, separated by colons; the first is used.
    if let Some(first) = std::env::var("BROWSER")
        .ok()
        .and_then(|list| list.split(':').next().map(str::to_owned))
        .filter(|first| !first.is_empty())
    {
        return (first, Vec::new());
    }
    if cfg!(target_os = "macos") {
        ("open".into(), Vec::new())
    } else if cfg!(windows) {
        // `start` would read `&` in the link as a command separator.
        ("rundll32".into(), vec!["url.dll,FileProtocolHandler"])
    } else {
        ("xdg-open".into(), Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_links_without_credentials_are_opened() {
        assert!(check("https://connector.example.com/connect/abc", true).is_ok());
        assert!(check("http://127.0.0.1:8080/connect/abc", true).is_ok());
        assert!(check("http://localhost:8080/connect/abc", true).is_ok());
        assert!(check("http://[::1]/connect", true).is_ok());
        assert_eq!(
            check("javascript:alert(1)", true),
            Err(LinkRefusal::Scheme("javascript".into()))
        );
        assert_eq!(
            check("file:///etc/passwd", true),
            Err(LinkRefusal::Scheme("file".into()))
        );
        assert_eq!(
            check("http://connector.example.com/connect", true),
            Err(LinkRefusal::PlainHttp)
        );
        assert_eq!(
            check("https://user:pw@connector.example.com/", true),
            Err(LinkRefusal::Credentials)
        );
        assert_eq!(check("not a link", true), Err(LinkRefusal::NotAUrl));
        let long = format!(
            "https://connector.example.com/{}",
            "a".repeat(MAX_LINK_LENGTH)
        );
        assert!(matches!(check(&long, true), Err(LinkRefusal::TooLong(_))));
        assert_eq!(
            check("http://127.0.0.1:8080/connect/abc", false),
            Err(LinkRefusal::PlainHttp),
            "a remote server's link to this machine"
        );
    }

    #[test]
    fn a_remote_servers_link_to_this_machine_or_a_private_network_is_refused() {
        let near = [
            "https://127.0.0.1/connect",
            "https://127.1.2.3:8443/connect",
            "https://2130706433/connect",
            "https://localhost/connect",
            "https://LOCALHOST./connect",
            "https://foo.localhost/connect",
            "https://[::1]/connect",
            "https://[::ffff:127.0.0.1]/connect",
            "https://[::ffff:10.1.2.3]/connect",
            "https://[::]/connect",
            "https://0.0.0.0/connect",
            "https://10.0.0.1/connect",
            "https://172.16.5.4/connect",
            "https://192.168.1.1/connect",
            "https://100.64.0.1/connect",
            "https://169.254.169.254/latest/meta-data/",
            "https://[fe80::1]/connect",
            "https://[fd00::1]/connect",
        ];
        for link in near {
            assert!(
                matches!(check(link, false), Err(LinkRefusal::NearHost(_))),
                "{link} from a remote server"
            );
            assert!(
                check(link, true).is_ok(),
                "{link} from a server on this machine"
            );
        }
        for link in [
            "https://connector.example.com/connect",
            "https://8.8.8.8/connect",
            "https://172.32.0.1/connect",
            "https://[2001:db8::1]/connect",
            "https://localhost.example.com/connect",
        ] {
            assert!(check(link, false).is_ok(), "{link}");
        }
    }
}
