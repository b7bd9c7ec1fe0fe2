//! What the commands print on standard output, through `out!`. A reader that went away
//! (`grantry connections list --json | head -1`, a pipe closed early) is no error: what is
//! left goes unwritten, the command finishes its work and exits as it would have, without
//! a word (Rust ignores SIGPIPE, so `println!` would panic there instead). Any other failure
//! to write ends the command with exit 1, saying why.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output's reader has gone: nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes one line to standard output (see the module's documentation).
pub(crate) fn line(text: std::fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(text)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
        }
        Err(e) => {
            eprintln!("grantry: cannot write to standard output: {e}");
            std::process::exit(1);
        }
    }
}

/// `println!` for the commands' results: see [`line()`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::program::commands::output::line(format_args!($($arg)*))
    };
}
