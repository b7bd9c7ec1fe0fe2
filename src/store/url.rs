//! The `--store` URL, parsed once: which kind of store it names. It is shown (`Display`,
//! `Debug`) only without credentials or query, which may carry some.

use std::fmt;
use std::str::FromStr;

/// A store grantry can keep its data in, by URL.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// `sqlite://PATH`: one process.
    Sqlite(String),
    /// `postgres://…` or `postgresql://…`.
    Postgres(String),
    /// `redis://…` or `rediss://…`; a cluster, `redis+cluster://…`; a primary through
    /// Sentinel, `redis+sentinel://…/MASTER` (`rediss+…` with TLS).
    Redis(String),
}

impl StoreUrl {
    /// The SQLite file `grantry.db` in `dir`: the default store.
    pub(crate) fn sqlite_in(dir: &std::path::Path) -> Self {
        Self::Sqlite(format!("sqlite://{}", dir.join("grantry.db").display()))
    }

    /// The whole URL, credentials included, for the driver only.
    pub(crate) fn expose(&self) -> &str {
        match self {
            Self::Sqlite(url) | Self::Postgres(url) | Self::Redis(url) => url,
        }
    }
}

impl FromStr for StoreUrl {
    type Err = String;

    fn from_str(url: &str) -> Result<Self, Self::Err> {
        let scheme = url.split(':').next().unwrap_or_default();
        match scheme {
            "sqlite" => Ok(Self::Sqlite(url.to_owned())),
            "postgres" | "postgresql" => Ok(Self::Postgres(url.to_owned())),
            "redis" | "rediss" | "redis+cluster" | "rediss+cluster" | "redis+sentinel"
            | "rediss+sentinel" => Ok(Self::Redis(url.to_owned())),
            // The scheme is not repeated: without `//`, what stands before the first `:` may
            // be a user name.
            _ => Err(
                "not a store URL: use sqlite://PATH, postgres://… or redis://… \
                 (rediss://…; redis+cluster://… for a Redis Cluster, redis+sentinel://…/MASTER \
                 through Sentinel)"
                    .into(),
            ),
        }
    }
}

/// As logs may show it: no credentials, no query.
impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&loggable(self.expose()))
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreUrl({self})")
    }
}

fn loggable(url: &str) -> String {
    let url = url.split('?').next().unwrap_or_default();
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://…@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::StoreUrl;

    fn shown(url: &str) -> String {
        url.parse::<StoreUrl>().unwrap().to_string()
    }

    #[test]
    fn shown_store_urls_carry_no_credentials() {
        assert_eq!(
            shown("postgres://app:s3cret@db.example:5432/grantry?sslmode=require"),
            "postgres://…@db.example:5432/grantry"
        );
        assert_eq!(shown("redis://:pw@cache:6379/0"), "redis://…@cache:6379/0");
        assert_eq!(
            shown("sqlite://./grantry-data/grantry.db"),
            "sqlite://./grantry-data/grantry.db"
        );
        let debug = format!("{:?}", "redis://:pw@cache".parse::<StoreUrl>().unwrap());
        assert!(!debug.contains("pw"), "{debug}");
        assert_eq!(
            shown("redis+cluster://u:pw@a:7000,b:7001/"),
            "redis+cluster://…@a:7000,b:7001/"
        );
        assert_eq!(
            shown("redis+sentinel://:pw@s1:26379,s2:26379/mymaster?sentinel_password=x"),
            "redis+sentinel://…@s1:26379,s2:26379/mymaster"
        );
    }

    #[test]
    fn only_known_stores_are_accepted() {
        let err = "mysql://db".parse::<StoreUrl>().unwrap_err();
        assert!(err.starts_with("not a store URL"), "{err}");
        assert!(matches!(
            "postgresql://x".parse(),
            Ok(StoreUrl::Postgres(_))
        ));
        assert!(matches!("rediss://x".parse(), Ok(StoreUrl::Redis(_))));
    }
}
