//! `#[derive(kubegen::Resource)]`.
//!
//! This crate will be a thin shell around the `kubegen-codegen` library: it parses the
//! annotated type into the generator's model and emits the same code the
//! `kubegen-codegen` CLI writes (typed client, lister, informer, `DeepCopy` and the
//! `kube_core::Resource` impl). It holds no macros yet; issue 7 delivers them.
