//! What an independent attack run found, each as the attack that now fails: connection
//! exhaustion, memory exhaustion through the demo, one principal taking a shared pool,
//! insecure settings, loose file modes, wrong error shapes and a crash mid-exchange.

mod connections;
mod crash;
mod demo;
mod files;
mod login;
mod providers;
mod rebinding;
mod shapes;
mod shares;
