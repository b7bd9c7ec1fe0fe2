//! What grantry's server and its bridge both stand on, and nothing of either: it depends on
//! no grantry crate.
//!
//! | module | what it holds |
//! |---|---|
//! | [`clock`] | wall-clock time in unix seconds and milliseconds |
//! | [`header_value`] | MCP header values, plain or `=?base64?…?=` (SEP-2243) |
//! | [`private_files`] | directories (0700) and files (0600) only their user may read |
//! | [`net`] | loopback names, the TLS provider, a transport error's words without its URL, this machine's name |
//! | [`random_id`] | a 128-bit random id |

pub mod clock;
pub mod header_value;
pub mod net;
pub mod private_files;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A random id of 128 bits, base64url encoded.
pub fn random_id() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 16]>())
}
