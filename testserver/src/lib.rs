//! `kubegen-testserver`: an in-memory Kubernetes API server.
//!
//! This crate will serve one storage engine through two fronts: an HTTP server on
//! loopback (usable with `kubectl` and any client) and an in-process transport that
//! backs fake clientsets, with fault injection for testing recovery. It holds no code
//! yet; issue 5 delivers it.
