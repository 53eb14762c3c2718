//! HTTP-level tests of the test server: every rule as a client sees it.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns: a failed call is a failed test

mod audit;
mod builtins;
mod cbor;
mod common;
mod crd;
mod crud;
mod defaults;
mod faults;
mod gc;
mod inprocess;
mod list;
mod list_semantics;
mod metadata;
mod namespaces;
mod patch;
mod protobuf;
mod validation;
mod watch;
