//! End-to-end tests: the real grantry binary on a loopback port, driven over HTTP by a raw
//! MCP client and a scripted browser, with the built-in demo provider as the OAuth server.

// Test scaffolding, not product: an unwrap that fails is the run's failure, nothing here is
// anyone's API, and a scenario reads top to bottom as its user's story, however long.
#![allow(clippy::unwrap_used, unreachable_pub, clippy::too_many_lines)]

#[macro_use]
mod support;

mod accounts;
mod adapters;
mod admin;
mod agreement;
mod api_keys;
mod apps;
mod attribution;
mod brand_and_language;
mod callback;
mod connect_page;
mod connected_page;
mod connections;
mod consent;
mod disconnect;
mod failover;
mod faults;
mod hardening;
mod home_page;
mod invoice_forms;
mod legacy;
mod lifecycle;
mod limits;
mod metrics;
mod oidc;
mod recorded_wire;
mod refresh;
mod registry;
mod replicas;
mod shared_store;
mod sign_in_flow;
mod startup;
mod tasks;
mod traces;
mod wire;
