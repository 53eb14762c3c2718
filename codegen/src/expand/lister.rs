//! The lister (`FooLister`, and `FooNamespaceLister` for namespaced types): read-only
//! views of an informer's cache over the runtime's `Lister<Foo>`. Cluster-scoped types
//! get `get` on the lister itself; namespaced ones get it per namespace.

use proc_macro2::TokenStream;
use quote::quote;

use super::names;
use crate::model::{ResourceDef, Scope, TypeDef};

/// `pub struct FooLister` (and `FooNamespaceLister`).
pub fn lister(ty: &TypeDef, r: &ResourceDef) -> TokenStream {
    let (vis, kind) = (&ty.vis, &ty.ident);
    let name = names::lister(kind);
    let cache = quote!(::kubegen::cache);
    let arc = quote!(::std::sync::Arc);
    let doc = format!(
        " Lists `{}` objects ({}) from an informer's cache.",
        r.kind,
        r.api_version()
    );
    let not_found = format!(
        " The object called `name`, or a NotFound error naming `{}`.",
        r.plural
    );
    let get = quote! {
        #[doc = #not_found]
        #[inline]
        #vis fn get(&self, name: &str) -> Result<#arc<#kind>, #cache::ListerError> {
            self.inner.get(name)
        }
    };
    // Namespaced: `foos(namespace)` and a namespace lister with `get`; cluster-scoped:
    // `get` on the lister itself.
    let (list_doc, scoped, namespace_lister) = match r.scope {
        Scope::Namespaced => {
            let ns_name = names::namespace_lister(kind);
            let accessor = names::accessor(r);
            let ns_doc = format!(" Lists `{}` objects of one namespace.", r.kind);
            (
                " Every cached object matching `selector`, in every namespace.",
                quote! {
                    /// The objects of `namespace`.
                    #[inline]
                    #vis fn #accessor(&self, namespace: &str) -> #ns_name {
                        #ns_name { inner: self.inner.namespaced(namespace) }
                    }
                },
                quote! {
                    #[doc = #ns_doc]
                    #[derive(Clone, Debug)]
                    #vis struct #ns_name {
                        inner: #cache::NamespaceLister<#kind>,
                    }

                    impl #ns_name {
                        /// Every cached object of the namespace matching `selector`.
                        #[inline]
                        #vis fn list(&self, selector: &#cache::Selector) -> Vec<#arc<#kind>> {
                            self.inner.list(selector)
                        }

                        #get
                    }
                },
            )
        }
        Scope::Cluster => (
            " Every cached object matching `selector`.",
            get,
            TokenStream::new(),
        ),
    };
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug)]
        #vis struct #name {
            inner: #cache::Lister<#kind>,
        }

        impl #name {
            /// A lister over `indexer` (an informer's cache, or an `Indexer` filled by hand).
            #[inline]
            #vis fn new(indexer: impl Into<#cache::ReadOnlyIndexer<#kind>>) -> Self {
                Self { inner: #cache::Lister::new(indexer) }
            }

            #[doc = #list_doc]
            #[inline]
            #vis fn list(&self, selector: &#cache::Selector) -> Vec<#arc<#kind>> {
                self.inner.list(selector)
            }

            #scoped
        }

        #namespace_lister
    }
}
