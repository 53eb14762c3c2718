//! Routes, written as idiomatic Rust: meta types through a module alias, a renamed
//! collection, type aliases (one generic), a re-export under another name, and two
//! recursive types (a route's fallback route, a match expression of match expressions).
//!
//! +groupName=routing.kubegen.dev

mod matching;
mod types;

pub use matching::{MatchExpr, Matcher as RouteMatcher};
pub use types::*;
