//! The kubegen code generator.
//!
//! This crate will hold the marker parser (`+genclient`, `+groupName`, `+k8s:deepcopy-gen`
//! read from doc comments or `#[resource(...)]`), the typed model, its validation and the
//! emitters for clientsets, listers, informers, `DeepCopy` impls and fake clientsets, plus
//! the `kubegen-codegen` CLI (`update` / `verify`). It holds no code yet; issue 7 delivers it.
