//! Field-wise `DeepCopy` impls: `deep_copy` builds `Self` from each field's
//! `deep_copy`; `deep_copy_into` copies each field into the target's field so its
//! allocations are reused. Enum targets holding the same variant are updated in place;
//! a different variant is replaced.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::{Body, TypeDef};

fn trait_path() -> TokenStream {
    quote!(::kubegen::deepcopy::DeepCopy)
}

/// `impl ::kubegen::deepcopy::DeepCopy for T` (every type parameter bound by `DeepCopy`).
pub fn deep_copy_impl(ty: &TypeDef) -> TokenStream {
    let dc = trait_path();
    let ident = &ty.ident;
    let mut generics = ty.generics.clone();
    for param in generics.type_params_mut() {
        param
            .bounds
            .push(syn::parse_quote!(::kubegen::deepcopy::DeepCopy));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let (copy, copy_into) = match &ty.body {
        Body::Struct(fields) => struct_bodies(fields),
        Body::Enum(variants) => enum_bodies(variants),
        // Never reached: lowering never sets `deep_copy` for these.
        Body::Union | Body::Alias => return TokenStream::new(),
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics #dc for #ident #ty_generics #where_clause {
            #[inline]
            fn deep_copy(&self) -> Self {
                #copy
            }

            #[inline]
            fn deep_copy_into(&self, out: &mut Self) {
                #copy_into
            }
        }
    }
}

fn struct_bodies(fields: &syn::Fields) -> (TokenStream, TokenStream) {
    let dc = trait_path();
    match fields {
        syn::Fields::Named(named) => {
            let names: Vec<_> = named
                .named
                .iter()
                .filter_map(|f| f.ident.as_ref())
                .collect();
            (
                quote!(Self { #(#names: #dc::deep_copy(&self.#names),)* }),
                quote!(#(#dc::deep_copy_into(&self.#names, &mut out.#names);)*),
            )
        }
        syn::Fields::Unnamed(unnamed) => {
            let idx: Vec<syn::Index> = (0..unnamed.unnamed.len()).map(syn::Index::from).collect();
            (
                quote!(Self(#(#dc::deep_copy(&self.#idx),)*)),
                quote!(#(#dc::deep_copy_into(&self.#idx, &mut out.#idx);)*),
            )
        }
        syn::Fields::Unit => (quote!(Self), quote!(let _ = out;)),
    }
}

fn enum_bodies(variants: &[syn::Variant]) -> (TokenStream, TokenStream) {
    let dc = trait_path();
    if variants.is_empty() {
        return (quote!(match *self {}), quote!(match *self {}));
    }
    let mut copy_arms = Vec::new();
    let mut into_arms = Vec::new();
    for v in variants {
        let name = &v.ident;
        let n = v.fields.len();
        let src: Vec<_> = (0..n).map(|i| format_ident!("__self_{}", i)).collect();
        let dst: Vec<_> = (0..n).map(|i| format_ident!("__out_{}", i)).collect();
        match &v.fields {
            syn::Fields::Named(named) => {
                let fields: Vec<_> = named
                    .named
                    .iter()
                    .filter_map(|f| f.ident.as_ref())
                    .collect();
                copy_arms.push(quote! {
                    Self::#name { #(#fields: #src),* } => Self::#name { #(#fields: #dc::deep_copy(#src)),* }
                });
                into_arms.push(quote! {
                    (Self::#name { #(#fields: #src),* }, Self::#name { #(#fields: #dst),* }) => {
                        #(#dc::deep_copy_into(#src, #dst);)*
                    }
                });
            }
            syn::Fields::Unnamed(_) => {
                copy_arms.push(quote! {
                    Self::#name(#(#src),*) => Self::#name(#(#dc::deep_copy(#src)),*)
                });
                into_arms.push(quote! {
                    (Self::#name(#(#src),*), Self::#name(#(#dst),*)) => {
                        #(#dc::deep_copy_into(#src, #dst);)*
                    }
                });
            }
            syn::Fields::Unit => {
                copy_arms.push(quote!(Self::#name => Self::#name));
                into_arms.push(quote!((Self::#name, Self::#name) => {}));
            }
        }
    }
    let fallback =
        (variants.len() > 1).then(|| quote!((__self, __out) => *__out = #dc::deep_copy(__self),));
    (
        quote!(match self { #(#copy_arms,)* }),
        quote!(match (self, out) { #(#into_arms)* #fallback }),
    )
}
