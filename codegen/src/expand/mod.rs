//! Emitters: model → tokens. Generated code names the runtime only through absolute
//! `::kubegen::` paths (kube-core and k8s-openapi through `::kubegen::__private`), so a
//! crate using it needs no other dependency and no imports.
//!
//! Per type: [`resource_impl`], [`deep_copy_impl`], [`typed_client`], [`lister`] and
//! [`informer`]. Both entry points call these same functions; the CLI places their
//! output in client-go's layout (`crate::layout`), the derive next to the type.

#[cfg(feature = "files")]
mod catalog;
mod client;
mod deepcopy;
mod informer;
mod lister;
pub mod names;
mod resource;
mod schema;

#[cfg(feature = "files")]
pub use catalog::{catalog, types_macro_name};
pub use client::typed_client;
pub use deepcopy::deep_copy_impl;
pub use informer::informer;
pub use lister::lister;
pub use resource::resource_impl;
pub use schema::schema_impl;

use proc_macro2::TokenStream;

use crate::model::{ResourceDef, TypeDef};

/// The client, lister and informer of a `+genclient` type, as the derive emits them
/// (the lister only with get and list, the informer only with list and watch, as
/// lister-gen and informer-gen decide).
pub fn access_tokens(ty: &TypeDef, r: &ResourceDef) -> TokenStream {
    let mut out = typed_client(ty, r);
    if r.has_lister() {
        out.extend(lister(ty, r));
    }
    if r.has_informer() {
        out.extend(informer(ty, r));
    }
    out
}

/// Everything generated for one type, as the derive emits it: the
/// `kube_core::Resource` impl (for resources needing one), the `DeepCopy` impl, then
/// the client, lister and informer of a `+genclient` type.
pub fn type_tokens(ty: &TypeDef) -> TokenStream {
    let mut out = TokenStream::new();
    if let Some(r) = ty.resource.as_ref().filter(|r| r.impl_resource) {
        out.extend(resource_impl(ty, r));
    }
    if ty.deep_copy {
        out.extend(deep_copy_impl(ty));
    }
    if let Some(r) = &ty.resource {
        out.extend(access_tokens(ty, r));
    }
    out
}
