//! The `grantry` binary: [`grantry::program::commands::main`] with its allocator.

use std::process::ExitCode;

// glibc's malloc and free were about 12 % of a sign-in round's CPU under load (perf); mimalloc's
// per-thread free lists make the many small, short-lived allocations of a request cheaper.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    grantry::program::commands::main()
}
