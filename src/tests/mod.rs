//! Tests that reach into more than one room of the crate: the store suite, run against every
//! backend on a real server. Inside the crate, so that what it tests (each store's backend
//! traits) need not be anyone's public API.

mod store_suite;
