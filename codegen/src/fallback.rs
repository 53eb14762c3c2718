//! What a derive emits when the input has errors (thiserror's `fallback.rs` idea): the
//! combined compile errors plus stub impls of `Resource` and `DeepCopy`, so code using
//! the type does not add a cascade of "trait not implemented" errors to the real ones.
//! The stubs' bodies are unreachable: the crate does not compile while they exist.

use proc_macro2::TokenStream;
use quote::quote;

/// Compile errors plus stubs for the traits the failed derive would have implemented.
pub fn fallback(
    input: &syn::DeriveInput,
    err: &syn::Error,
    resource: bool,
    deep_copy: bool,
) -> TokenStream {
    let errors = err.to_compile_error();
    if matches!(input.data, syn::Data::Union(_)) {
        return errors;
    }
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let resource_stub = resource.then(|| {
        let meta = quote!(::kubegen::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta);
        let cow = quote!(::std::borrow::Cow);
        quote! {
            #[automatically_derived]
            impl #impl_generics ::kubegen::__private::kube_core::Resource for #ident #ty_generics #where_clause {
                type DynamicType = ();
                type Scope = ::kubegen::__private::k8s_openapi::NamespaceResourceScope;
                fn kind(_: &()) -> #cow<'_, str> { ::core::unreachable!() }
                fn group(_: &()) -> #cow<'_, str> { ::core::unreachable!() }
                fn version(_: &()) -> #cow<'_, str> { ::core::unreachable!() }
                fn plural(_: &()) -> #cow<'_, str> { ::core::unreachable!() }
                fn meta(&self) -> &#meta { ::core::unreachable!() }
                fn meta_mut(&mut self) -> &mut #meta { ::core::unreachable!() }
            }
        }
    });
    let deep_copy_stub = deep_copy.then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics ::kubegen::deepcopy::DeepCopy for #ident #ty_generics #where_clause {
                fn deep_copy(&self) -> Self { ::core::unreachable!() }
            }
        }
    });
    quote! {
        #errors
        #resource_stub
        #deep_copy_stub
    }
}
