//! The API types, marked for kubegen-codegen (`build.rs` generates from them).

pub mod stable;
