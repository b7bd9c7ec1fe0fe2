//! Reading a tool's arguments with serde: the types the schema gives, unknown arguments
//! refused. What does not fit is an invalid-arguments error naming what is wrong.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ToolError;

/// `arguments` as `T` (a struct with `#[serde(deny_unknown_fields)]`), for the tool `tool`.
pub(crate) fn parse<T: DeserializeOwned>(
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<T, ToolError> {
    T::deserialize(Value::Object(arguments.clone()))
        .map_err(|e| ToolError::InvalidArguments(format!("{tool}: {e}")))
}

/// A short identifier argument (a provider id, a cursor, an invoice id): not empty, at most
/// `max` bytes.
pub(crate) fn short(tool: &str, name: &str, value: &str, max: usize) -> Result<(), ToolError> {
    if value.is_empty() || value.len() > max {
        return Err(ToolError::InvalidArguments(format!(
            "{tool}: {name} must be 1 to {max} characters"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Example {
        #[serde(default)]
        provider: Option<String>,
    }

    fn arguments(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn unknown_and_mistyped_arguments_are_named() {
        let ok: Example = parse("t", &arguments(json!({"provider": "xero"}))).unwrap();
        assert_eq!(ok.provider.as_deref(), Some("xero"));
        let unknown = parse::<Example>("t", &arguments(json!({"limit": 3}))).unwrap_err();
        assert!(
            unknown.to_string().contains("unknown field `limit`"),
            "{unknown}"
        );
        let mistyped = parse::<Example>("t", &arguments(json!({"provider": 7}))).unwrap_err();
        assert!(mistyped.to_string().contains("invalid type"), "{mistyped}");
        assert!(short("t", "cursor", "", 512).is_err());
    }
}
