//! The `--config` TOML file. Each key is an option's field name (the long flag with `_` for
//! `-`), and its value becomes that option's default: a flag or variable still wins, and the
//! value is parsed by the option's own parser, so the file accepts exactly what the flag does.

use std::path::{Path, PathBuf};

use clap::{Args as _, Command};

use super::ServeArgs;

/// A `--config` file that cannot be used; names the file and the key at fault.
#[derive(Debug, thiserror::Error)]
#[error("--config (GRANTRY_CONFIG) {}: {problem}", path.display())]
pub(crate) struct FileError {
    pub(crate) path: PathBuf,
    pub(crate) problem: String,
}

/// `command` with every key of the file at `path` as the default of its option, in every
/// subcommand that takes the serve options.
pub(super) fn with_file_defaults(command: Command, path: &Path) -> Result<Command, FileError> {
    let error = |problem: String| FileError {
        path: path.to_owned(),
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(format!("cannot read it: {e}")))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| error(e.to_string()))?;
    let options = ServeArgs::augment_args(Command::new("grantry"));
    let mut defaults = Vec::with_capacity(table.len());
    for (key, value) in &table {
        let text = value_text(value).ok_or_else(|| {
            error(format!(
                "`{key}` must be a string, a number, a boolean or an array of them"
            ))
        })?;
        check(&options, key, &text).map_err(error)?;
        defaults.push((key.clone(), text));
    }
    Ok(set_defaults(command, &defaults))
}

/// The value as the option's flag would take it: arrays comma-separated.
fn value_text(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(text) => Some(text.clone()),
        toml::Value::Integer(n) => Some(n.to_string()),
        toml::Value::Float(x) => Some(x.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        toml::Value::Array(items) => items
            .iter()
            .map(|item| match item {
                toml::Value::Array(_) => None,
                scalar => value_text(scalar),
            })
            .collect::<Option<Vec<_>>>()
            .map(|items| items.join(",")),
        toml::Value::Table(_) | toml::Value::Datetime(_) => None,
    }
}

/// Whether `key` names an option the file may set and `text` is a value of it.
fn check(options: &Command, key: &str, text: &str) -> Result<(), String> {
    let arg = options
        .get_arguments()
        .find(|arg| arg.get_id() == key && arg.get_long().is_some() && key != "config")
        .ok_or_else(|| {
            format!("`{key}` is not a setting (a key is a flag's name with `_` for `-`)")
        })?;
    // The option alone, without its variable: a parse of all of them would read every
    // GRANTRY_* variable too, and blame one of theirs on this key.
    let flag = format!("--{}={text}", arg.get_long().unwrap_or(key));
    let alone = Command::new("grantry").arg(arg.clone().env(None::<&str>));
    alone
        .try_get_matches_from(["grantry", flag.as_str()])
        .map(drop)
        .map_err(|e| {
            let possible: Vec<_> = arg
                .get_possible_values()
                .iter()
                .map(|value| value.get_name().to_owned())
                .collect();
            let detail = match std::error::Error::source(&e) {
                Some(cause) => cause.to_string(),
                None if !possible.is_empty() => format!("must be one of {}", possible.join(", ")),
                // An option whose values may carry a password refuses without a cause, in
                // words of its own that do not repeat the value: nor does this.
                None if e.kind() == clap::error::ErrorKind::ValueValidation => {
                    let said = e.to_string();
                    let said = said.trim().trim_start_matches("error: ").to_owned();
                    return format!("`{key}`: {said}");
                }
                None => e.kind().to_string(),
            };
            format!("`{key}` = `{text}`: {detail}")
        })
}

fn set_defaults(mut command: Command, defaults: &[(String, String)]) -> Command {
    for (key, text) in defaults {
        if command.get_arguments().any(|arg| arg.get_id() == key) {
            command = command.mut_arg(key, |arg| arg.default_value(text.clone()));
        }
    }
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, |sub| set_defaults(sub, defaults));
    }
    command
}
