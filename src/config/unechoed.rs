//! A value parser that refuses a value without repeating it. clap's own refusal prints the
//! value it was given, and a URL an operator gives (a store's, a collector's, a webhook's)
//! may carry a password: these options' refusals name the option, its variable and why.

use std::ffi::OsStr;
use std::fmt::Display;
use std::str::FromStr;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::{Arg, Command};

/// Parses with the function it holds; refuses naming the option, never the value.
#[derive(Clone)]
pub(super) struct Unechoed<T>(pub fn(&str) -> Result<T, String>);

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Unechoed<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let refuse = |why: String| {
            let name = arg.map_or_else(|| "a value".to_owned(), named);
            let message = format!("invalid value for {name}: {why} (the value is not shown)\n");
            clap::Error::raw(ErrorKind::ValueValidation, message).with_cmd(cmd)
        };
        let text = value
            .to_str()
            .ok_or_else(|| refuse("not valid UTF-8".to_owned()))?;
        (self.0)(text).map_err(refuse)
    }
}

/// `'--store <URL>' (GRANTRY_STORE)`.
fn named(arg: &Arg) -> String {
    match arg.get_env() {
        Some(variable) => format!("'{arg}' ({})", variable.to_string_lossy()),
        None => format!("'{arg}'"),
    }
}

/// `T`'s own parsing, its error as words.
pub(super) fn parsed<T: FromStr>(text: &str) -> Result<T, String>
where
    T::Err: Display,
{
    text.parse().map_err(|e: T::Err| e.to_string())
}
