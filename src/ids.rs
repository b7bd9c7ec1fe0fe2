//! The ids grantry's values carry, typed, from where they are read (the catalog, a store
//! row, a request) to the answers: a provider's ([`ProviderId`]), a connection's
//! ([`ConnectionId`]), an account's at its provider ([`AccountId`]).

use std::fmt;
use std::str::FromStr;

/// A provider's id in the catalog (`stripe`, `demo`, `acme-books`): 1-32 characters of a-z,
/// 0-9, `-` and `_`, checked once where it is read. It reads as the `str` it is.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
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

/// A connection's id (`conn_…`): stable across refreshes and reconnects, shown to the person
/// and the model, named by the lifecycle events. It reveals nothing of whose it is.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct ConnectionId(String);

impl ConnectionId {
    /// A new connection's id, random.
    pub(crate) fn fresh() -> Self {
        Self(format!("conn_{}", grantry_base::random_id()))
    }

    /// The id a store row holds (what it was given when the connection was made).
    pub(crate) fn stored(id: String) -> Self {
        Self(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for ConnectionId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for ConnectionId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// The provider's id of an account a connection is used with (a Xero tenant, a QuickBooks
/// company, a FreshBooks business), as the provider gives it. Never empty: no account is
/// `None`.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct AccountId(String);

impl AccountId {
    /// The id as given; an empty one is no account.
    pub fn given(id: impl Into<String>) -> Option<Self> {
        let id = id.into();
        (!id.is_empty()).then_some(Self(id))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text a row or a sealed value keeps for an optional account: `""` for none.
    pub(crate) fn text(account: Option<&Self>) -> &str {
        account.map_or("", Self::as_str)
    }
}

impl<'de> serde::Deserialize<'de> for AccountId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = String::deserialize(deserializer)?;
        Self::given(id).ok_or_else(|| serde::de::Error::custom("an empty account id"))
    }
}

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for AccountId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for AccountId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// An optional account as sealed values keep it: its id, or `""` for none.
pub(crate) mod account_or_empty {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::AccountId;

    pub(crate) fn serialize<S: Serializer>(
        account: &Option<AccountId>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(AccountId::text(account.as_ref()))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<AccountId>, D::Error> {
        Ok(AccountId::given(String::deserialize(deserializer)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_account_id_is_no_account() {
        assert_eq!(AccountId::given(""), None);
        assert_eq!(AccountId::given("t-1").unwrap().as_str(), "t-1");
        assert!(serde_json::from_str::<AccountId>("\"\"").is_err());
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Sealed {
            #[serde(with = "account_or_empty", default)]
            w: Option<AccountId>,
        }
        let none = Sealed { w: None };
        assert_eq!(serde_json::to_string(&none).unwrap(), r#"{"w":""}"#);
        assert_eq!(serde_json::from_str::<Sealed>(r#"{"w":""}"#).unwrap(), none);
        assert_eq!(serde_json::from_str::<Sealed>("{}").unwrap(), none);
    }
}
