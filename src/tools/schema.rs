//! The JSON Schemas `tools/list` shows, derived (schemars) from the types a tool reads its
//! arguments into and answers with: a field, its description (its doc comment) and its
//! limits ([`super::args::Short`]) are written once, in the type.
//!
//! Both are self-contained objects: subschemas inlined (some clients resolve no `$ref`), no
//! `$schema`, and the type's own title and description left to the tool's. Doc comments are
//! wrapped at 100 columns; a description is one paragraph, so its line breaks become spaces.
//! An enum of words is a plain `enum` list, as clients and models read best (schemars would
//! make each documented variant a `oneOf` branch of its own).

use schemars::generate::{Contract, SchemaSettings};
use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema};
use serde_json::{Value, json};

/// What a call may pass: the deserialize side of `T`. An argument that may be left out is
/// one the schema does not require; it is not advertised as `null` (absent says it).
pub(crate) fn input<T: JsonSchema>() -> Value {
    let mut schema = derived::<T>(Contract::Deserialize);
    if let Value::Object(root) = &mut schema {
        // Present even when empty: some clients read an object schema's properties as given.
        let properties = root.entry("properties").or_insert_with(|| json!({}));
        if let Value::Object(properties) = properties {
            properties.values_mut().for_each(not_null);
        }
    }
    schema
}

/// What a call answers with: the serialize side of `T`, where a field that may be empty is
/// there as `null` (and so required).
pub(crate) fn output<T: JsonSchema>() -> Value {
    derived::<T>(Contract::Serialize)
}

fn derived<T: JsonSchema>(contract: Contract) -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
        s.contract = contract;
    });
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    OneParagraph.transform(&mut schema);
    WordLists.transform(&mut schema);
    let mut schema = schema.to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("title");
        root.remove("description");
    }
    schema
}

/// `{"type": ["string", "null"]}` as `{"type": "string"}`.
fn not_null(property: &mut Value) {
    let Some(types) = property.get_mut("type") else {
        return;
    };
    if let Value::Array(list) = types {
        list.retain(|t| t != "null");
        if let [only] = list.as_slice() {
            *types = only.clone();
        }
    }
}

/// Descriptions from doc comments, their line breaks made spaces (a blank line stays one).
struct OneParagraph;

impl Transform for OneParagraph {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(Value::String(text)) = schema.get_mut("description") {
            *text = text
                .split("\n\n")
                .map(|paragraph| paragraph.replace('\n', " "))
                .collect::<Vec<_>>()
                .join("\n\n");
        }
        transform_subschemas(self, schema);
    }
}

/// `{"oneOf": [{"type": "string", "const": "a", …}, {"type": "string", "enum": ["b"]}]}` as
/// `{"type": "string", "enum": ["a", "b"]}`: the words, in order, without each one's
/// description (the field's own says what they mean).
struct WordLists;

impl Transform for WordLists {
    fn transform(&mut self, schema: &mut Schema) {
        transform_subschemas(self, schema);
        let Some(Value::Array(branches)) = schema.get("oneOf") else {
            return;
        };
        let words: Option<Vec<Vec<Value>>> = branches.iter().map(words_of).collect();
        if let Some(words) = words.map(|w| w.concat()) {
            schema.remove("oneOf");
            schema.insert("type".into(), "string".into());
            schema.insert("enum".into(), words.into());
        }
    }
}

/// The words one `oneOf` branch allows, if it is a string `const` or `enum` and nothing more
/// than its description.
fn words_of(branch: &Value) -> Option<Vec<Value>> {
    let branch = branch.as_object()?;
    let only_words = branch
        .keys()
        .all(|k| ["type", "const", "enum", "description"].contains(&k.as_str()));
    if branch.get("type")? != "string" || !only_words {
        return None;
    }
    match (branch.get("const"), branch.get("enum")) {
        (Some(word @ Value::String(_)), None) => Some(vec![word.clone()]),
        (None, Some(Value::Array(words))) => Some(words.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::args::Short;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    /// What an example tool reads.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Arguments {
        /// Which one, written
        /// over two lines.
        which: Option<Short<9>>,
        needed: Short<3>,
    }

    /// What it answers.
    #[derive(Serialize, JsonSchema)]
    struct Answer {
        maybe: Option<String>,
        how: How,
    }

    /// How it went.
    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum How {
        /// Well.
        Well,
        Badly,
        /// Not at all.
        Not,
    }

    #[test]
    fn input_schemas_require_what_must_be_there_and_carry_the_limits() {
        assert_eq!(
            input::<Arguments>(),
            json!({
                "type": "object",
                "properties": {
                    "which": {"type": "string", "minLength": 1, "maxLength": 9,
                        "description": "Which one, written over two lines."},
                    "needed": {"type": "string", "minLength": 1, "maxLength": 3}
                },
                "required": ["needed"],
                "additionalProperties": false
            })
        );
    }

    #[derive(Deserialize, JsonSchema)]
    struct Nothing {}

    #[test]
    fn an_input_without_arguments_still_lists_its_properties() {
        assert_eq!(
            input::<Nothing>(),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn output_schemas_require_fields_that_may_be_null_and_list_words_plainly() {
        assert_eq!(
            output::<Answer>(),
            json!({
                "type": "object",
                "properties": {
                    "maybe": {"type": ["string", "null"]},
                    "how": {"type": "string", "enum": ["badly", "well", "not"],
                        "description": "How it went."}
                },
                "required": ["maybe", "how"]
            })
        );
    }
}
