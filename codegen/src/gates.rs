//! Cargo features over a generated tree (`--group-features CRATE`): each API group's
//! modules are compiled only with the feature named after the group's module (`apps`,
//! `core`, ...), the apply configurations only with `applyconfig`, so a library shipping
//! many groups (kubegen's built-in tree) costs its users only the groups they use.
//!
//! A path into a group whose feature is off fails with rustc's own "the item is gated
//! behind the `apps` feature"; an accessor (`clientset.apps_v1()`, `factory.apps()`) is
//! a method, which rustc reports only as missing, so the accessor stays, bounded by a
//! trait nothing implements whose `#[diagnostic::on_unimplemented]` names the feature.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::expand::names;

/// The features of one generated tree, owned by the crate `krate`.
#[derive(Clone, Copy, Debug)]
pub struct Gates<'a> {
    /// The crate whose features they are (for messages: "turn on kubegen's `apps`").
    pub krate: &'a str,
}

/// The feature of the apply configurations.
pub const APPLYCONFIG: &str = "applyconfig";

impl Gates<'_> {
    /// `#[cfg(feature = "<group>")]`.
    pub fn group(&self, group_mod: &Ident) -> TokenStream {
        let feature = group_mod.to_string();
        quote!(#[cfg(feature = #feature)])
    }

    /// `#[cfg(feature = "applyconfig")]`.
    pub fn applyconfig(&self) -> TokenStream {
        quote!(#[cfg(feature = #APPLYCONFIG)])
    }

    /// `on` behind the group's feature, and, without it, a method of the same name whose
    /// every call is a compile error naming the feature.
    pub fn accessor(
        &self,
        output_module: &syn::Path,
        group_mod: &Ident,
        method: &Ident,
        on: TokenStream,
    ) -> TokenStream {
        let feature = group_mod.to_string();
        let marker = marker(group_mod);
        let doc = format!(
            " Off: turn on {}'s `{feature}` feature to use `{method}`.",
            self.krate
        );
        quote! {
            #[cfg(feature = #feature)]
            #on
            #[cfg(not(feature = #feature))]
            #[doc = #doc]
            #[doc(hidden)]
            pub fn #method(&self) -> #output_module::features::GroupOff
            where
                for<'a> #output_module::features::GroupOff: #output_module::features::#marker,
            {
                #output_module::features::GroupOff
            }
        }
    }

    /// `features.rs`: `GroupOff` and one marker trait per group, defined while the group's
    /// feature is off.
    pub fn file<'g>(&self, groups: impl Iterator<Item = &'g Ident>) -> TokenStream {
        let krate = self.krate;
        let markers = groups.map(|g| {
            let feature = g.to_string();
            let marker = marker(g);
            let message = format!("the `{feature}` API group is off: turn on {krate}'s `{feature}` feature");
            let label = format!("needs {krate}'s `{feature}` feature");
            let note = format!(
                "in Cargo.toml: {krate} = {{{{ version = \"...\", features = [\"{feature}\"] }}}}"
            );
            let doc = format!(" Implemented by nothing: bounds the accessors of the `{feature}` group while its feature is off.");
            quote! {
                #[cfg(not(feature = #feature))]
                #[doc = #doc]
                #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                pub trait #marker {}
            }
        });
        let doc = format!(
            " What an accessor of a group whose feature is off returns; no call compiles (a bound names the feature). Each group is {krate}'s feature of the group's module name; apply configurations are `{APPLYCONFIG}`."
        );
        quote! {
            //! The cargo features of this tree's API groups.
            #[doc = #doc]
            #[derive(Clone, Copy, Debug)]
            pub struct GroupOff;
            #(#markers)*
        }
    }
}

/// `AppsFeatureOn`.
fn marker(group_mod: &Ident) -> Ident {
    let camel: String = group_mod
        .to_string()
        .split('_')
        .map(names::upper_first)
        .collect();
    format_ident!("{}FeatureOn", camel)
}
