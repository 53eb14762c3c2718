//! The REST client (client-go's `rest` and typed clients).
//!
//! This module will hold `Config`, `Client` (reqwest behind a `Transport` trait),
//! `ResourceClient<K>`, `DynamicClient`, the typed API `Error` and `retry_on_conflict`.
//! Issue 4 delivers it.
