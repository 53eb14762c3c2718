//! Apply configurations (client-go's applyconfiguration-gen): for every struct of an API
//! package, a struct with every field optional, builder methods, and for each resource a
//! constructor carrying apiVersion/kind/name/namespace and `extract_<kind>` functions.
//!
//! Two sources, one emitter: [`from_rust`] reads the model (the CLI's API trees and the
//! derive's input), [`from_definitions`] Kubernetes' OpenAPI definitions (the runtime's
//! built-in tree, aliases of k8s-openapi types); [`emit`] writes both. The CLI places the
//! output in client-go's layout ([`files`]), the derive beside the type.

pub mod emit;
#[cfg(feature = "files")]
pub mod files;
#[cfg(feature = "files")]
pub mod from_definitions;
pub mod from_rust;
pub mod model;

use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;
use crate::model::TypeDef;

/// What the derive and the CLI emit for one Rust type (nothing for a generic type, a
/// union or an alias).
pub fn type_tokens(ty: &TypeDef, cx: &Ctxt) -> TokenStream {
    match from_rust::generated(ty, cx) {
        Some(from_rust::Generated::Config(t)) => emit::apply_configuration(&t),
        Some(from_rust::Generated::Whole(of)) => emit::applied_whole(&of),
        None => TokenStream::new(),
    }
}
