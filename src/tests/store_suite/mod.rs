//! One store suite, run against every backend on a real server: SQLite (a temp file),
//! PostgreSQL (a fresh database per test) and Redis (a fresh key prefix per test).
//!
//! Servers: `GRANTRY_TEST_POSTGRES` (default `postgres://postgres@127.0.0.1:5432/postgres`) and
//! `GRANTRY_TEST_REDIS` (default `redis://127.0.0.1:6379`). Without a server a test says it
//! skipped and why; under `CI=true` a missing server fails the run instead.

// Test scaffolding, not product: an unwrap that fails is the run's failure, nothing here is
// anyone's API, and a scenario reads top to bottom as its user's story, however long.
#![allow(clippy::unwrap_used, unreachable_pub, clippy::too_many_lines)]

// First: the others' tests are made by its `for_each_backend!`.
#[macro_use]
mod backends;
mod accounts;
mod flows;
mod grants;
mod keys;
mod leases;
mod lifecycle;
mod outbox;
mod replicas;
mod replication;
mod sessions;
mod tasks;
