//! The fake clientset under `--output-dir` (`--with-fake`):
//! `clientset/versioned/fake/mod.rs`, a `Clientset` over kubegen-testserver's in-process
//! fake API server that serves every generated resource.
//!
//! code-generator counterpart: client-gen's fake clientset
//! (`clientset/versioned/fake/clientset_generated.go`, `NewSimpleClientset`).

use std::path::Path;

use proc_macro2::TokenStream;
use quote::quote;

use super::{GroupVersion, LayoutConfig, LayoutFile, type_path};

/// `<root>/fake/mod.rs` (`root`: `clientset/versioned`): the fake `Clientset`, which
/// registers every resource of the tree with the in-process server.
pub(super) fn file(root: &Path, gvs: &[GroupVersion<'_>], config: &LayoutConfig<'_>) -> LayoutFile {
    (root.join("fake/mod.rs"), tokens(gvs, config))
}

fn tokens(gvs: &[GroupVersion<'_>], config: &LayoutConfig<'_>) -> TokenStream {
    let fake = quote!(::kubegen_testserver::fake);
    let registrations = gvs.iter().flat_map(|gv| {
        gv.resources().map(move |(ty, r)| {
            let path = type_path(config, gv, &ty.ident);
            let status = r.has_status_field;
            quote!(fake.register::<#path>(#status);)
        })
    });
    quote! {
        //! A [`Clientset`] served by an in-process fake API server (client-go's
        //! `fake.NewSimpleClientset`): requests are recorded as actions, reactors can
        //! answer them, and objects can be seeded with `Clientset::add`. Needs the
        //! `kubegen-testserver` crate.

        /// The clientset over an in-process server; dereferences to the real
        /// [`super::Clientset`].
        #[derive(Clone, Debug)]
        pub struct Clientset {
            clientset: super::Clientset,
            fake: #fake::Fake,
        }

        impl Clientset {
            /// An empty fake server that serves every generated resource.
            pub fn new() -> Self {
                let fake = #fake::Fake::new();
                #(#registrations)*
                Self {
                    clientset: super::Clientset::new(fake.client()),
                    fake,
                }
            }

            /// Seeds `obj` without recording an action (client-go's tracker `Add`).
            pub fn add<K: ::kubegen::Object>(&self, obj: &K) -> Result<(), #fake::FakeError> {
                self.fake.add(obj)
            }

            /// The fake server: its action log and reactors.
            pub fn fake(&self) -> &#fake::Fake {
                &self.fake
            }
        }

        impl Default for Clientset {
            fn default() -> Self {
                Self::new()
            }
        }

        impl ::std::ops::Deref for Clientset {
            type Target = super::Clientset;

            fn deref(&self) -> &super::Clientset {
                &self.clientset
            }
        }

        /// An empty fake clientset (client-go's `NewSimpleClientset`).
        pub fn new_simple_clientset() -> Clientset {
            Clientset::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Input, paths};

    #[test]
    fn with_fake_adds_the_fake_clientset_registering_every_resource() {
        let input = Input::sample();
        let without = input.files(|_| {});
        assert!(
            !paths(&without).iter().any(|p| p.contains("/fake/")),
            "{:?}",
            paths(&without)
        );
        let files = input.files(|c| c.with_fake = true);
        let fake: Vec<String> = paths(&files)
            .into_iter()
            .filter(|p| p.contains("fake"))
            .collect();
        assert_eq!(fake, ["clientset/versioned/fake/mod.rs"]);
        let text = input.text(&files, "clientset/versioned/fake/mod.rs");
        for ty in [
            "v1 :: Widget",
            "v1 :: Gadget",
            "v2 :: Widget",
            "v1 :: TokenReview",
        ] {
            assert!(text.contains(ty), "{ty}: {text}");
        }
        let versioned = input.text(&files, "clientset/versioned/mod.rs");
        assert!(versioned.contains("pub mod fake ;"), "{versioned}");
    }
}
