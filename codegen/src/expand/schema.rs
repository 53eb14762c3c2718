//! `#[derive(kubegen::Schema)]`: `impl kubegen::crd::Schema` (the type's structural
//! schema) and, for a type with `#[resource(group = ..., version = ...)]`, an inherent
//! `crd()` returning its `CustomResourceDefinition`: the CLI's `crd` generator run on the
//! type alone, as a JSON template whose holes (types defined elsewhere) are filled at run
//! time from their own `Schema` impls.

use proc_macro2::TokenStream;
use quote::quote;

use crate::crd::manifest;
use crate::crd::schema::{Hole, Schemas};
use crate::ctxt::Ctxt;
use crate::model::TypeDef;

fn template(value: &serde_json::Value, holes: &[Hole]) -> TokenStream {
    let text = value.to_string();
    let fills = holes.iter().map(|h| match h {
        Hole::Schema(ty) => quote!(<#ty as ::kubegen::crd::Schema>::schema),
        Hole::SchemaOrK8s(ty, k8s) => {
            let k8s = k8s.to_string();
            // Autoref specialisation: `&&Pick<T>` finds `ViaSchema` when `T: Schema`,
            // else derefs once to `ViaK8s` (only for k8s-openapi types).
            quote!(|| {
                #[allow(unused_imports)]
                use ::kubegen::crd::__private::{ViaK8s as _, ViaSchema as _};
                (&&::kubegen::crd::__private::Pick::<#ty>::new()).schema(#k8s)
            })
        }
    });
    quote! {
        ::kubegen::crd::fill(
            #text,
            &[#(#fills),*],
        )
    }
}

/// The `Schema` impl of `ty` and, when `ty` is a resource, its `crd()`; problems go to
/// `cx`.
pub fn schema_impl(ty: &TypeDef, cx: &Ctxt) -> TokenStream {
    let schemas = Schemas::for_derive(ty, cx);
    let schema = schemas.named(ty, &mut Vec::new());
    let holes = schemas.take_holes();
    let ident = &ty.ident;
    let body = template(&schema, &holes);
    let mut out = quote! {
        #[automatically_derived]
        impl ::kubegen::crd::Schema for #ident {
            fn schema() -> ::kubegen::__private::serde_json::Value {
                #body
            }
        }
    };
    if let Some(r) = &ty.resource {
        let schemas = Schemas::for_derive(ty, cx);
        let crd = manifest::crd(ty, r, &schemas, cx);
        let holes = schemas.take_holes();
        let body = template(&crd, &holes);
        out.extend(quote! {
            #[automatically_derived]
            impl #ident {
                /// The `apiextensions.k8s.io/v1` CustomResourceDefinition of this type, as
                /// `kubegen-codegen crd` writes it.
                pub fn crd() -> ::kubegen::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                    ::kubegen::crd::custom_resource_definition(#body)
                }
            }
        });
    }
    out
}
