//! The informer (`FooInformer`): `Foo`'s shared informer and lister from a factory, and
//! the standalone constructors `new_foo_informer` / `new_filtered_foo_informer`
//! (informer-gen's `NewFooInformer` / `NewFilteredFooInformer`).

use proc_macro2::TokenStream;
use quote::quote;

use super::names;
use crate::model::{ResourceDef, Scope, TypeDef};

/// `pub struct FooInformer` and the two constructors. `lister()` is emitted when the
/// type has a lister (`FooLister` must be in scope).
pub fn informer(ty: &TypeDef, r: &ResourceDef) -> TokenStream {
    let (vis, kind) = (&ty.vis, &ty.ident);
    let name = names::informer(kind);
    let (new_fn, new_filtered_fn) = names::informer_constructors(kind);
    let cache = quote!(::kubegen::cache);
    let client = quote!(::kubegen::client);
    let factory = quote!(::kubegen::informers::SharedInformerFactory);
    let duration = quote!(::std::time::Duration);
    let doc = format!(
        " `{}`'s ({}) shared informer and lister in a factory.",
        r.kind,
        r.api_version()
    );
    let lister = r.has_lister().then(|| {
        let lister = names::lister(kind);
        quote! {
            /// A lister over the shared informer's cache.
            #[inline]
            #vis fn lister(&self) -> #lister {
                #lister::new(self.informer().indexer())
            }
        }
    });
    let (ns_param, ns_arg, scoped) = match r.scope {
        Scope::Namespaced => (
            quote!(namespace: &str,),
            quote!(namespace,),
            quote!((!namespace.is_empty()).then_some(namespace)),
        ),
        Scope::Cluster => (quote!(), quote!(), quote!(None)),
    };
    let ns_doc = match r.scope {
        Scope::Namespaced => " in `namespace` (`\"\"`: every namespace)",
        Scope::Cluster => "",
    };
    let new_doc = format!(
        " A standalone informer for `{}`{ns_doc}, not shared through a factory (prefer the factory); `run` starts it.",
        r.kind
    );
    let filtered_doc = format!(
        " A standalone informer for `{}`{ns_doc} whose list and watch requests pass through `tweak`.",
        r.kind
    );
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug)]
        #vis struct #name {
            factory: #factory,
        }

        impl #name {
            /// Access through `factory`.
            #[inline]
            #vis fn new(factory: #factory) -> Self {
                Self { factory }
            }

            /// The shared informer (created on first request; start it with the factory).
            #[inline]
            #vis fn informer(&self) -> #cache::SharedIndexInformer<#kind> {
                self.factory.informer_for::<#kind>()
            }

            #lister
        }

        #[doc = #new_doc]
        #[inline]
        #vis fn #new_fn(
            client: #client::Client,
            #ns_param
            resync: #duration,
            indexers: #cache::Indexers<#kind>,
        ) -> #cache::UnstartedInformer<#kind> {
            #new_filtered_fn(client, #ns_arg resync, indexers, None)
        }

        #[doc = #filtered_doc]
        #[inline]
        #vis fn #new_filtered_fn(
            client: #client::Client,
            #ns_param
            resync: #duration,
            indexers: #cache::Indexers<#kind>,
            tweak: Option<#cache::TweakListParams>,
        ) -> #cache::UnstartedInformer<#kind> {
            let mut list_watch = #cache::ListWatch::new(#client::ResourceClient::scoped(client, #scoped));
            if let Some(tweak) = tweak {
                list_watch = list_watch.tweak(tweak);
            }
            #cache::SharedIndexInformer::new(list_watch, resync, indexers)
        }
    }
}
