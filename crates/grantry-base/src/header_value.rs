//! Header values as MCP 2026-07-28 writes them (SEP-2243): plain visible ASCII as it is,
//! anything else (non-ASCII, control characters, leading or trailing spaces, empty) wrapped
//! as `=?base64?…?=`. The bridge encodes the headers it sends; the server decodes the ones
//! it compares with the body.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// `value` as a header carries it.
pub fn encode(value: &str) -> Cow<'_, str> {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ');
    if plain {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(format!("{PREFIX}{}{SUFFIX}", STANDARD.encode(value)))
    }
}

/// A wrapped value that is not base64 of UTF-8 text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the header value is not valid Base64")]
pub struct NotBase64;

/// The value a header carries: unwrapped when it is `=?base64?…?=`, as it is otherwise.
pub fn decode(header: &str) -> Result<Cow<'_, str>, NotBase64> {
    let Some(inner) = header
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
    else {
        return Ok(Cow::Borrowed(header));
    };
    let bytes = STANDARD.decode(inner).map_err(|_| NotBase64)?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| NotBase64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_visible_ascii_are_wrapped_and_come_back() {
        assert_eq!(encode("xero"), "xero");
        assert_eq!(encode("Zürich"), "=?base64?WsO8cmljaA==?=");
        assert_eq!(encode(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(encode(""), "=?base64??=");
        for value in ["xero", "Zürich", " padded", "", "a\tb"] {
            assert_eq!(decode(&encode(value)).unwrap(), value);
        }
    }

    #[test]
    fn a_wrapped_value_must_be_base64_of_text() {
        assert_eq!(decode("=?base64?ZGVtbw==?="), Ok(Cow::Borrowed("demo")));
        assert_eq!(decode("=?base64?***?="), Err(NotBase64));
        assert_eq!(decode("=?base64?/w==?="), Err(NotBase64), "not UTF-8");
        assert_eq!(
            decode("=?BASE64?ZGVtbw==?="),
            Ok(Cow::Borrowed("=?BASE64?ZGVtbw==?="))
        );
    }
}
