//! Wall-clock time in unix seconds: what every expiry in grantry is measured in; and the
//! parser of whole seconds every duration option uses.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// Milliseconds since the Unix epoch: for ordering events within a second.
pub fn unix_now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// A parser (for command-line options) of whole seconds within `min..=max`, read as a
/// `Duration`.
pub fn seconds(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<std::time::Duration, String> + Clone + Send + Sync + 'static {
    move |text| {
        let value: u64 = text
            .parse()
            .map_err(|_| format!("`{text}` is not a whole number of seconds"))?;
        if (min..=max).contains(&value) {
            Ok(std::time::Duration::from_secs(value))
        } else {
            Err(format!("must be between {min} and {max} seconds"))
        }
    }
}
