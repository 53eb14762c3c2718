//! The `kube_core::Resource` impl: static group, version, kind and plural
//! (`DynamicType = ()`), the scope type, and `meta()` / `meta_mut()` over the
//! `metadata` field.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{ResourceDef, Scope, TypeDef};

/// `impl ::kubegen::__private::kube_core::Resource for T`.
pub fn resource_impl(ty: &TypeDef, r: &ResourceDef) -> TokenStream {
    let ident = &ty.ident;
    let (kind, group, version, plural) = (&r.kind, &r.group, &r.version, &r.plural);
    let api_version = r.api_version();
    let scope = match r.scope {
        Scope::Namespaced => quote!(::kubegen::__private::k8s_openapi::NamespaceResourceScope),
        Scope::Cluster => quote!(::kubegen::__private::k8s_openapi::ClusterResourceScope),
    };
    let meta =
        quote!(::kubegen::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta);
    let cow = quote!(::std::borrow::Cow);
    quote! {
        #[automatically_derived]
        impl ::kubegen::__private::kube_core::Resource for #ident {
            type DynamicType = ();
            type Scope = #scope;

            fn kind(_: &()) -> #cow<'_, str> {
                #cow::Borrowed(#kind)
            }

            fn group(_: &()) -> #cow<'_, str> {
                #cow::Borrowed(#group)
            }

            fn version(_: &()) -> #cow<'_, str> {
                #cow::Borrowed(#version)
            }

            fn api_version(_: &()) -> #cow<'_, str> {
                #cow::Borrowed(#api_version)
            }

            fn plural(_: &()) -> #cow<'_, str> {
                #cow::Borrowed(#plural)
            }

            fn meta(&self) -> &#meta {
                &self.metadata
            }

            fn meta_mut(&mut self) -> &mut #meta {
                &mut self.metadata
            }
        }
    }
}
