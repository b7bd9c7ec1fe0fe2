//! The ids grantry's values carry, typed, from where they are read (the catalog, a store
//! row, a request) to the answers: a provider's ([`ProviderId`]).

use std::fmt;
use std::str::FromStr;

/// A provider's id in the catalog (`stripe`, `demo`, `acme-books`): 1-32 characters of a-z,
/// 0-9, `-` and `_`, checked once where it is read. It reads as the `str` it is.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct ProviderId(String);

impl ProviderId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ProviderId {
    type Err = String;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        let allowed =
            |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_';
        if (1..=32).contains(&id.len()) && id.bytes().all(allowed) {
            Ok(Self(id.to_owned()))
        } else {
            Err(format!(
                "`{id}` is not a provider id (1-32 characters of a-z, 0-9, - and _)"
            ))
        }
    }
}

impl TryFrom<String> for ProviderId {
    type Error = String;

    fn try_from(id: String) -> Result<Self, Self::Error> {
        id.parse()
    }
}

impl std::ops::Deref for ProviderId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for ProviderId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProviderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for ProviderId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<String> for ProviderId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl From<ProviderId> for String {
    fn from(id: ProviderId) -> Self {
        id.0
    }
}

impl PartialEq<&str> for ProviderId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
