//! A `tools/call`, whichever era it came in: one typed value ([`call::ToolCall`]) that the
//! endpoint's modern edge or the legacy era's handler builds, and [`dispatch`] runs. grantry's
//! plain tools go through their sign-in rounds, the others through their form and
//! confirmation rounds ([`rounds`]), an extension's tools through [`extension`] (the
//! registry's one extension point, for tools a build adds: the conformance suite's fixtures).
//! The [`registry`] lists the tools once; [`results`] are the answers before either era
//! writes them; [`apps`] is the connect card's resource (MCP Apps). For a client that
//! declares the Tasks extension, a round becomes a durable task the client polls
//! ([`tasks_extension`], over the task store, [`crate::tasks`]).
//!
//! Below the legacy era: what a legacy session lends a call reaches the dispatch as
//! [`call::LegacySession`], which the era implements, so nothing here names rmcp.

pub(crate) mod apps;
pub(crate) mod call;
pub(crate) mod dispatch;
pub mod extension;
pub(crate) mod registry;
pub(crate) mod results;
pub mod rounds;
pub(crate) mod tasks_extension;
