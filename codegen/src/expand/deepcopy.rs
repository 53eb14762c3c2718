//! Field-wise `DeepCopy` impls: `deep_copy` builds `Self` from a copy of each field;
//! `deep_copy_into` copies each field into the target's field so its allocations are
//! reused. Enum targets holding the same variant are updated in place; a different
//! variant is replaced.
//!
//! Each field is copied through the runtime's per-field dispatch
//! (`::kubegen::deepcopy::__private::Field(&self.x).copy_field()`): the field type's
//! `DeepCopy` impl when it has one, else `Clone` (`clone` / `clone_from`). The choice is
//! made by the compiler, so a field may be of any k8s-openapi type, `Quantity`,
//! `serde_json::Value` or any `Clone` type of another crate without annotation, and the
//! derive (which sees one type at a time) emits exactly what the CLI does.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::{Body, TypeDef};

fn trait_path() -> TokenStream {
    quote!(::kubegen::deepcopy::DeepCopy)
}

/// `Field(<place>).copy_field()`; the method name carries the field type's span, so a
/// field type with neither `DeepCopy` nor `Clone` is reported at the field.
fn copy(place: TokenStream, span: Span) -> TokenStream {
    let method = quote_spanned!(span=> copy_field);
    quote!(::kubegen::deepcopy::__private::Field(#place).#method())
}

/// `Field(<place>).copy_field_into(<out>);`.
fn copy_into(place: TokenStream, out: TokenStream, span: Span) -> TokenStream {
    let method = quote_spanned!(span=> copy_field_into);
    quote!(::kubegen::deepcopy::__private::Field(#place).#method(#out);)
}

/// Brings the dispatch trait into scope inside a method body (only when a field is
/// copied, so no import goes unused).
fn dispatch_import(any_field: bool) -> Option<TokenStream> {
    any_field.then(|| {
        quote!(
            use ::kubegen::deepcopy::__private::CopyField as _;
        )
    })
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
    let (copy, copy_into, any_field) = match &ty.body {
        Body::Struct(fields) => struct_bodies(fields),
        Body::Enum(variants) => enum_bodies(variants),
        // Never reached: lowering never sets `deep_copy` for these.
        Body::Union | Body::Alias(_) => return TokenStream::new(),
    };
    let import = dispatch_import(any_field);
    quote! {
        #[automatically_derived]
        impl #impl_generics #dc for #ident #ty_generics #where_clause {
            #[inline]
            fn deep_copy(&self) -> Self {
                #import
                #copy
            }

            #[inline]
            fn deep_copy_into(&self, out: &mut Self) {
                #import
                #copy_into
            }
        }
    }
}

fn struct_bodies(fields: &syn::Fields) -> (TokenStream, TokenStream, bool) {
    match fields {
        syn::Fields::Named(named) => {
            let names: Vec<_> = named
                .named
                .iter()
                .filter_map(|f| f.ident.as_ref())
                .collect();
            let copies = named.named.iter().filter_map(|f| {
                let name = f.ident.as_ref()?;
                Some(copy(quote!(&self.#name), f.ty.span()))
            });
            let intos = named.named.iter().filter_map(|f| {
                let name = f.ident.as_ref()?;
                Some(copy_into(
                    quote!(&self.#name),
                    quote!(&mut out.#name),
                    f.ty.span(),
                ))
            });
            (
                quote!(Self { #(#names: #copies,)* }),
                quote!(#(#intos)*),
                !names.is_empty(),
            )
        }
        syn::Fields::Unnamed(unnamed) => {
            let copies = unnamed.unnamed.iter().enumerate().map(|(i, f)| {
                let idx = syn::Index::from(i);
                copy(quote!(&self.#idx), f.ty.span())
            });
            let intos = unnamed.unnamed.iter().enumerate().map(|(i, f)| {
                let idx = syn::Index::from(i);
                copy_into(quote!(&self.#idx), quote!(&mut out.#idx), f.ty.span())
            });
            (
                quote!(Self(#(#copies,)*)),
                quote!(#(#intos)*),
                !unnamed.unnamed.is_empty(),
            )
        }
        syn::Fields::Unit => (quote!(Self), quote!(let _ = out;), false),
    }
}

fn enum_bodies(variants: &[syn::Variant]) -> (TokenStream, TokenStream, bool) {
    let dc = trait_path();
    if variants.is_empty() {
        return (quote!(match *self {}), quote!(match *self {}), false);
    }
    let mut copy_arms = Vec::new();
    let mut into_arms = Vec::new();
    let mut any_field = false;
    for v in variants {
        let name = &v.ident;
        let n = v.fields.len();
        any_field |= n > 0;
        let src: Vec<_> = (0..n).map(|i| format_ident!("__self_{}", i)).collect();
        let dst: Vec<_> = (0..n).map(|i| format_ident!("__out_{}", i)).collect();
        let copies: Vec<_> = v
            .fields
            .iter()
            .zip(&src)
            .map(|(f, s)| copy(quote!(#s), f.ty.span()))
            .collect();
        let intos: Vec<_> = v
            .fields
            .iter()
            .zip(src.iter().zip(&dst))
            .map(|(f, (s, d))| copy_into(quote!(#s), quote!(#d), f.ty.span()))
            .collect();
        match &v.fields {
            syn::Fields::Named(named) => {
                let fields: Vec<_> = named
                    .named
                    .iter()
                    .filter_map(|f| f.ident.as_ref())
                    .collect();
                copy_arms.push(quote! {
                    Self::#name { #(#fields: #src),* } => Self::#name { #(#fields: #copies),* }
                });
                into_arms.push(quote! {
                    (Self::#name { #(#fields: #src),* }, Self::#name { #(#fields: #dst),* }) => {
                        #(#intos)*
                    }
                });
            }
            syn::Fields::Unnamed(_) => {
                copy_arms.push(quote! {
                    Self::#name(#(#src),*) => Self::#name(#(#copies),*)
                });
                into_arms.push(quote! {
                    (Self::#name(#(#src),*), Self::#name(#(#dst),*)) => {
                        #(#intos)*
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
        any_field,
    )
}
