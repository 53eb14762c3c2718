//! HTTP-level tests of the test server: every rule as a client sees it.

mod common;
mod crd;
mod crud;
mod faults;
mod gc;
mod inprocess;
mod list;
mod patch;
mod watch;
