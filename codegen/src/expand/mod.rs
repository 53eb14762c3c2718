//! Emitters: model → tokens. Generated code names the runtime only through absolute
//! `::kubegen::` paths (kube-core and k8s-openapi through `::kubegen::__private`), so a
//! crate using it needs no other dependency and no imports.

mod deepcopy;
mod resource;

pub use deepcopy::deep_copy_impl;
pub use resource::resource_impl;

use proc_macro2::TokenStream;

use crate::model::TypeDef;

/// Everything generated for one type, as both entry points emit it: the
/// `kube_core::Resource` impl (for resources needing one), then the `DeepCopy` impl.
pub fn type_tokens(ty: &TypeDef) -> TokenStream {
    let mut out = TokenStream::new();
    if let Some(r) = ty.resource.as_ref().filter(|r| r.impl_resource) {
        out.extend(resource_impl(ty, r));
    }
    if ty.deep_copy {
        out.extend(deep_copy_impl(ty));
    }
    out
}
