//! Which Redis a `--store` URL names, and how: one server (`redis://`, `rediss://`), a Redis
//! Cluster (`redis+cluster://`, `rediss+cluster://`: several seed nodes, any of them) or a
//! primary found through Sentinel (`redis+sentinel://`, `rediss+sentinel://`: the sentinels,
//! then the master's name). The redis crate has no URL for the last two; grantry reads them.
//!
//! ```text
//! redis+cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…][/]
//! redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/MASTER[/DB][?sentinel_password=…]
//! ```
//!
//! The credentials are the data nodes'; sentinels that want a password of their own get it in
//! the query (never logged: logs show store URLs without credentials or query).

use std::fmt;

/// A Redis deployment, as the URL names it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Topology {
    /// One server, by the redis crate's own URL.
    Single(String),
    /// A Redis Cluster, by its seed nodes (each a `redis://` or `rediss://` URL).
    Cluster { nodes: Vec<String> },
    /// The primary `master` as `sentinels` name it.
    Sentinel(SentinelSetup),
}

/// What finding a primary through Sentinel takes.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SentinelSetup {
    /// `host:port` of each sentinel.
    pub(crate) sentinels: Vec<(String, u16)>,
    pub(crate) master: String,
    pub(crate) tls: bool,
    pub(crate) db: i64,
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) sentinel_password: Option<String>,
}

/// A URL that names no Redis grantry can reach, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TopologyError(String);

impl Topology {
    pub(crate) fn parse(url: &str) -> Result<Self, TopologyError> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| TopologyError("a Redis URL starts with redis://".into()))?;
        match scheme {
            "redis" | "rediss" => Ok(Self::Single(url.to_owned())),
            "redis+cluster" | "rediss+cluster" => cluster(scheme, rest),
            "redis+sentinel" | "rediss+sentinel" => sentinel(scheme, rest).map(Self::Sentinel),
            other => Err(TopologyError(format!("`{other}` is not a Redis scheme"))),
        }
    }
}

/// The seeds of a cluster URL, each as a URL of one node with the same credentials.
fn cluster(scheme: &str, rest: &str) -> Result<Topology, TopologyError> {
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !path.is_empty() && path != "0" {
        return Err(TopologyError(
            "a Redis Cluster has only database 0: leave the path out".into(),
        ));
    }
    let (userinfo, hosts) = split_userinfo(authority);
    let node_scheme = scheme.trim_end_matches("+cluster");
    let nodes = host_list(hosts)?
        .into_iter()
        .map(|(host, port)| {
            let credentials = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
            format!("{node_scheme}://{credentials}{host}:{port}/")
        })
        .collect();
    Ok(Topology::Cluster { nodes })
}

fn sentinel(scheme: &str, rest: &str) -> Result<SentinelSetup, TopologyError> {
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut parts = path.split('/').filter(|p| !p.is_empty());
    let master = parts.next().ok_or_else(|| {
        TopologyError("a Sentinel URL names its master: redis+sentinel://HOST:PORT/MASTER".into())
    })?;
    let db = match parts.next() {
        Some(db) => db
            .parse()
            .map_err(|_| TopologyError(format!("`{db}` is not a database number")))?,
        None => 0,
    };
    let (userinfo, hosts) = split_userinfo(authority);
    let (username, password) = credentials(userinfo);
    let sentinel_password = url::form_urlencoded::parse(query.as_bytes())
        .find(|(name, _)| name == "sentinel_password")
        .map(|(_, value)| value.into_owned());
    Ok(SentinelSetup {
        sentinels: host_list(hosts)?,
        master: decode(master),
        tls: scheme.starts_with("rediss"),
        db,
        username,
        password,
        sentinel_password,
    })
}

/// `USER:PASSWORD` (if any) and the hosts of an authority; the user information ends at its
/// last `@` (a password may hold one, percent-encoded or not).
fn split_userinfo(authority: &str) -> (Option<&str>, &str) {
    match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (Some(userinfo), hosts),
        None => (None, authority),
    }
}

fn credentials(userinfo: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(userinfo) = userinfo else {
        return (None, None);
    };
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let given = |text: &str| (!text.is_empty()).then(|| decode(text));
    (given(user), given(password))
}

fn decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map_or_else(|| text.to_owned(), |(_, value)| value.into_owned())
}

/// `HOST:PORT,HOST:PORT…` (an IPv6 host in brackets).
fn host_list(hosts: &str) -> Result<Vec<(String, u16)>, TopologyError> {
    let listed: Vec<(String, u16)> = hosts
        .split(',')
        .map(|each| {
            let (host, port) = each.rsplit_once(':').ok_or_else(|| {
                TopologyError(format!(
                    "`{each}` is not HOST:PORT (each node needs its port)"
                ))
            })?;
            let port = port
                .parse()
                .map_err(|_| TopologyError(format!("`{port}` is not a port")))?;
            if host.is_empty() {
                return Err(TopologyError(format!("`{each}` names no host")));
            }
            Ok((host.to_owned(), port))
        })
        .collect::<Result<_, _>>()?;
    if listed.is_empty() {
        return Err(TopologyError("the URL names no node".into()));
    }
    Ok(listed)
}

/// Never shows a credential.
impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Single(_) => f.write_str("Single"),
            Self::Cluster { nodes } => write!(f, "Cluster({} seeds)", nodes.len()),
            Self::Sentinel(setup) => write!(
                f,
                "Sentinel({} sentinels, master {})",
                setup.sentinels.len(),
                setup.master
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_url_is_read() {
        assert_eq!(
            Topology::parse("redis://h:6379/2").unwrap(),
            Topology::Single("redis://h:6379/2".into())
        );
        assert_eq!(
            Topology::parse("redis+cluster://u:p%40ss@a:7000,b:7001").unwrap(),
            Topology::Cluster {
                nodes: vec![
                    "redis://u:p%40ss@a:7000/".into(),
                    "redis://u:p%40ss@b:7001/".into()
                ]
            }
        );
        let Topology::Sentinel(setup) = Topology::parse(
            "rediss+sentinel://:secret@s1:26379,[::1]:26380/mymaster/3?sentinel_password=x",
        )
        .unwrap() else {
            panic!("a sentinel URL")
        };
        assert_eq!(
            setup.sentinels,
            [("s1".into(), 26379), ("[::1]".into(), 26380)]
        );
        assert_eq!(
            (setup.master.as_str(), setup.db, setup.tls),
            ("mymaster", 3, true)
        );
        assert_eq!(setup.password.as_deref(), Some("secret"));
        assert_eq!(setup.username, None);
        assert_eq!(setup.sentinel_password.as_deref(), Some("x"));
    }

    #[test]
    fn a_url_naming_no_reachable_redis_is_refused_with_why() {
        for (url, why) in [
            ("redis+cluster://a:7000/1", "database 0"),
            ("redis+cluster://a", "HOST:PORT"),
            ("redis+cluster://a:x", "not a port"),
            ("redis+sentinel://s:26379", "names its master"),
            ("redis+sentinel://s:26379/m/x", "database number"),
            ("redis+sentinel://:26379/m", "names no host"),
        ] {
            let refused = Topology::parse(url).unwrap_err().to_string();
            assert!(refused.contains(why), "{url}: {refused}");
        }
    }

    #[test]
    fn debug_shows_no_credential() {
        let shown = format!(
            "{:?}",
            Topology::parse("redis+cluster://u:hunter2@a:1").unwrap()
        );
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
