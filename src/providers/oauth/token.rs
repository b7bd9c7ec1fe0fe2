//! A provider's token (an access or refresh token, or an API key kept in its place) as
//! grantry holds it: a [`SecretString`], so `Debug` prints nothing and the memory is zeroed
//! when dropped. It is read out where it is sent ([`ProviderToken::expose`]) and where a grant
//! is sealed (its `Serialize`, into the sealed JSON only).

use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone)]
pub struct ProviderToken(SecretString);

impl ProviderToken {
    /// The token itself, to send to the provider (or to compare, in tests).
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl From<String> for ProviderToken {
    fn from(token: String) -> Self {
        Self(SecretString::from(token))
    }
}

impl From<&str> for ProviderToken {
    fn from(token: &str) -> Self {
        Self(SecretString::from(token))
    }
}

impl std::fmt::Debug for ProviderToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[REDACTED]")
    }
}

/// Two tokens are equal when their texts are, compared in constant time (one may be an
/// attacker's guess).
impl PartialEq for ProviderToken {
    fn eq(&self, other: &Self) -> bool {
        crate::seal::constant_time_eq(self.expose(), other.expose())
    }
}

impl Eq for ProviderToken {}

impl PartialEq<str> for ProviderToken {
    fn eq(&self, other: &str) -> bool {
        crate::seal::constant_time_eq(self.expose(), other)
    }
}

impl PartialEq<&str> for ProviderToken {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

impl PartialEq<String> for ProviderToken {
    fn eq(&self, other: &String) -> bool {
        self == other.as_str()
    }
}

impl Serialize for ProviderToken {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.expose())
    }
}

impl<'de> Deserialize<'de> for ProviderToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_token_and_serde_keeps_it() {
        let token = ProviderToken::from("at_secret");
        assert_eq!(format!("{token:?}"), "[REDACTED]");
        let sealed = serde_json::to_string(&token).unwrap();
        assert_eq!(sealed, "\"at_secret\"");
        let opened: ProviderToken = serde_json::from_str(&sealed).unwrap();
        assert_eq!(opened, token);
        assert_ne!(opened, ProviderToken::from("at_other"));
        assert_eq!(opened, "at_secret");
        assert_ne!(opened, "at_secre");
    }
}
