//! Reading a tool's arguments with serde: the types the schema gives, unknown arguments
//! refused. What does not fit is an invalid-arguments error naming the argument and what is
//! wrong with it. [`Short`] carries a text argument's limits, for the parser and the schema
//! alike ([`super::schema`]).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::ToolError;

/// `arguments` as `T` (a struct with `#[serde(deny_unknown_fields)]`), for the tool `tool`.
pub(crate) fn parse<T: DeserializeOwned>(
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<T, ToolError> {
    // Read in place: the map is the request's own, and a copy would cost as much as reading.
    serde_path_to_error::deserialize(arguments).map_err(|e| {
        let path = e.path().to_string();
        let error = e.into_inner().to_string();
        // An unknown argument names itself; any other error is prefixed by the argument.
        if path == "." || error.starts_with("unknown field") {
            ToolError::InvalidArguments(format!("{tool}: {error}"))
        } else {
            ToolError::InvalidArguments(format!("{tool}: {path}: {error}"))
        }
    })
}

/// A short text argument (a provider id, a cursor, an invoice id): 1 to `MAX` bytes. The
/// schema says `minLength` 1 and `maxLength` `MAX`; what is longer in bytes (a long
/// non-ASCII name) is refused too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct Short<const MAX: usize>(String);

impl<const MAX: usize> std::ops::Deref for Short<MAX> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<const MAX: usize> std::fmt::Display for Short<MAX> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de, const MAX: usize> Deserialize<'de> for Short<MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.is_empty() || text.len() > MAX {
            return Err(D::Error::custom(format!("must be 1 to {MAX} characters")));
        }
        Ok(Self(text))
    }
}

impl<const MAX: usize> JsonSchema for Short<MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Short{MAX}").into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": 1, "maxLength": MAX})
    }
}

/// A provider's id as an argument names it (looked up in the catalog, so not yet a
/// [`crate::ids::ProviderId`]).
pub(crate) type ProviderArg = Short<64>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Example {
        provider: Option<Short<8>>,
    }

    fn arguments(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn unknown_mistyped_and_overlong_arguments_are_named() {
        let ok: Example = parse("t", &arguments(json!({"provider": "xero"}))).unwrap();
        assert_eq!(ok.provider.as_deref(), Some("xero"));
        let unknown = parse::<Example>("t", &arguments(json!({"limit": 3}))).unwrap_err();
        assert!(
            unknown.to_string().contains("unknown field `limit`"),
            "{unknown}"
        );
        let mistyped = parse::<Example>("t", &arguments(json!({"provider": 7}))).unwrap_err();
        assert!(
            mistyped.to_string().contains("provider: invalid type"),
            "{mistyped}"
        );
        for refused in ["", "ninechars"] {
            let long = parse::<Example>("t", &arguments(json!({"provider": refused})));
            assert_eq!(
                long.unwrap_err().to_string(),
                "invalid arguments: t: provider: must be 1 to 8 characters"
            );
        }
    }
}
