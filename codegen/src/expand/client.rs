//! The typed client (`FooClient`): one method per verb the markers allow, each a
//! one-line call into the runtime's `ResourceClient<Foo>`, plus the extension methods
//! of `+genclient:method=`. A verb that is not allowed is a method that does not exist.
//!
//! The methods are not `async fn`s: each returns the runtime method's future as
//! `impl Future + 'a` (every reference argument borrowed for `'a`), so a generated client
//! adds no state machine of its own per method and type. `client.get(name).await` reads
//! the same; rustc's time for a crate of 20 derived types fell from ~2.9 s to ~1.7 s
//! (`hack/bench-derive-compile.sh`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::names;
use crate::model::{Extension, ResourceDef, Scope, TypeDef, Verb};

/// Paths the generated code uses, all through the runtime crate.
struct Paths {
    client: TokenStream,
    error: TokenStream,
    params: TokenStream,
}

impl Paths {
    fn new() -> Self {
        Paths {
            client: quote!(::kubegen::client),
            error: quote!(::kubegen::client::Error),
            params: quote!(::kubegen::client::params),
        }
    }

    /// The return type of a generated method: the runtime call's future, resolving to
    /// `output` or the client's error, borrowing for `'a` (see the module docs).
    fn future(&self, output: TokenStream) -> TokenStream {
        let error = &self.error;
        quote!(impl ::core::future::Future<Output = Result<#output, #error>> + 'a)
    }
}

/// `pub struct FooClient` and its methods.
pub fn typed_client(ty: &TypeDef, r: &ResourceDef) -> TokenStream {
    let p = Paths::new();
    let (vis, kind) = (&ty.vis, &ty.ident);
    let name = names::client(kind);
    let client = &p.client;
    let doc = format!(
        " The typed client for `{}` ({}, resource `{}`): {}.",
        r.kind,
        r.api_version(),
        r.plural,
        verbs_doc(r)
    );
    let constructor = match r.scope {
        Scope::Namespaced => quote! {
            /// A client for objects in `namespace` (`""`: every namespace).
            #[inline]
            #vis fn new(client: #client::Client, namespace: &str) -> Self {
                Self {
                    inner: #client::ResourceClient::scoped(
                        client,
                        (!namespace.is_empty()).then_some(namespace),
                    ),
                }
            }
        },
        Scope::Cluster => quote! {
            /// A client for these cluster-scoped objects.
            #[inline]
            #vis fn new(client: #client::Client) -> Self {
                Self { inner: #client::ResourceClient::cluster(client) }
            }
        },
    };
    let verbs = r
        .client_verbs()
        .into_iter()
        .map(|v| verb_method(&p, vis, kind, v));
    let extensions = r
        .extensions
        .iter()
        .map(|e| extension_method(&p, vis, kind, e));
    // `+genclient:noVerbs` without extension methods: a client no method reads (client-gen
    // still generates it, and so does kubegen, for the clientset's accessor).
    let unread = (r.client_verbs().is_empty() && r.extensions.is_empty())
        .then(|| quote!(#[allow(dead_code)]));
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug)]
        #vis struct #name {
            #unread
            inner: #client::ResourceClient<#kind>,
        }

        impl #name {
            #constructor
            #(#verbs)*
            #(#extensions)*
        }
    }
}

fn verbs_doc(r: &ResourceDef) -> String {
    let verbs: Vec<&str> = r.client_verbs().into_iter().map(Verb::as_str).collect();
    let extensions: Vec<String> = r.extensions.iter().map(|e| names::snake(&e.name)).collect();
    match (verbs.is_empty(), extensions.is_empty()) {
        (true, true) => "no verbs".to_owned(),
        (false, true) => format!("verbs {}", verbs.join(", ")),
        (true, false) => format!("extension methods {}", extensions.join(", ")),
        (false, false) => format!(
            "verbs {}; extension methods {}",
            verbs.join(", "),
            extensions.join(", ")
        ),
    }
}

fn verb_method(p: &Paths, vis: &syn::Visibility, kind: &syn::Ident, verb: Verb) -> TokenStream {
    let Paths { client, params, .. } = p;
    let object = p.future(quote!(#kind));
    let list = p.future(quote!(#client::ObjectList<#kind>));
    let deleted = p.future(quote!(#client::DeleteResponse<#kind>));
    let deleted_list = p.future(quote!(#client::DeleteResponse<#client::ObjectList<#kind>>));
    let watch = p.future(quote!(#client::WatchStream<#kind>));
    match verb {
        Verb::Create => quote! {
            /// Creates `obj`.
            #[inline]
            #vis fn create<'a>(&'a self, pp: &'a #params::PostParams, obj: &'a #kind) -> #object {
                self.inner.create(pp, obj)
            }
        },
        Verb::Update => quote! {
            /// Replaces the object named in `obj` (a stale resourceVersion is a conflict).
            #[inline]
            #vis fn update<'a>(&'a self, pp: &'a #params::PostParams, obj: &'a #kind) -> #object {
                self.inner.update(pp, obj)
            }
        },
        Verb::UpdateStatus => quote! {
            /// Replaces the status subresource of the object named in `obj`.
            #[inline]
            #vis fn update_status<'a>(&'a self, pp: &'a #params::PostParams, obj: &'a #kind) -> #object {
                self.inner.update_status(pp, obj)
            }
        },
        Verb::Delete => quote! {
            /// Deletes `name`: the object (still there while finalizers run) or a Status.
            #[inline]
            #vis fn delete<'a>(
                &'a self,
                name: &'a str,
                dp: &'a #params::DeleteParams,
            ) -> #deleted {
                self.inner.delete(name, dp)
            }
        },
        Verb::DeleteCollection => quote! {
            /// Deletes every object matching `lp`'s selectors.
            #[inline]
            #vis fn delete_collection<'a>(
                &'a self,
                dp: &'a #params::DeleteParams,
                lp: &'a #params::ListParams,
            ) -> #deleted_list {
                self.inner.delete_collection(dp, lp)
            }
        },
        Verb::Get => quote! {
            /// Gets the object called `name`.
            #[inline]
            #vis fn get<'a>(&'a self, name: &'a str) -> #object {
                self.inner.get(name)
            }
        },
        Verb::List => quote! {
            /// One page of objects (honouring `limit` and `continue_token`).
            #[inline]
            #vis fn list<'a>(&'a self, lp: &'a #params::ListParams) -> #list {
                self.inner.list(lp)
            }

            /// Every object, page by page.
            #[inline]
            #vis fn list_all<'a>(&'a self, lp: &'a #params::ListParams) -> #list {
                self.inner.list_all(lp)
            }
        },
        Verb::Watch => quote! {
            /// Watches from `resource_version`.
            #[inline]
            #vis fn watch<'a>(
                &'a self,
                wp: &'a #params::WatchParams,
                resource_version: &'a str,
            ) -> #watch {
                self.inner.watch(wp, resource_version)
            }
        },
        Verb::Patch => quote! {
            /// Patches `name` (merge, JSON, strategic or apply).
            #[inline]
            #vis fn patch<'a, P: ::kubegen::__private::serde::Serialize>(
                &'a self,
                name: &'a str,
                pp: &'a #params::PatchParams,
                patch: &'a #params::Patch<P>,
            ) -> #object {
                self.inner.patch(name, pp, patch)
            }
        },
        Verb::Apply => quote! {
            /// Server-side apply of an apply configuration (`FooApplyConfiguration::new(..)`,
            /// or `extract_foo(..)` changed): only the fields it sets are sent and become
            /// `params.field_manager`'s.
            #[inline]
            #vis fn apply<'a, C>(
                &'a self,
                config: &'a C,
                params: &'a ::kubegen::applyconfig::ApplyParams,
            ) -> #object
            where
                C: ::kubegen::applyconfig::ApplyConfiguration<Object = #kind>,
            {
                self.inner.apply_configuration(config, params)
            }
        },
        Verb::ApplyStatus => quote! {
            /// Server-side apply of an apply configuration's `status` to the status
            /// subresource.
            #[inline]
            #vis fn apply_status<'a, C>(
                &'a self,
                config: &'a C,
                params: &'a ::kubegen::applyconfig::ApplyParams,
            ) -> #object
            where
                C: ::kubegen::applyconfig::ApplyConfiguration<Object = #kind>,
            {
                self.inner.apply_configuration_status(config, params)
            }
        },
    }
}

fn extension_method(
    p: &Paths,
    vis: &syn::Visibility,
    kind: &syn::Ident,
    e: &Extension,
) -> TokenStream {
    let Paths { client, params, .. } = p;
    let method = names::ident(&names::snake(&e.name));
    let input = e
        .input
        .as_ref()
        .map_or_else(|| quote!(#kind), |i| quote!(#i));
    let result = match (&e.result, e.verb) {
        (Some(r), _) => quote!(#r),
        (None, Verb::List) => quote!(#client::ObjectList<#kind>),
        (None, _) => quote!(#kind),
    };
    let returns = p.future(result);
    let sub = match &e.subresource {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    };
    let target = match &e.subresource {
        Some(s) => format!("the `{s}` subresource of `name`"),
        None => "`name`".to_owned(),
    };
    let doc = format!(" `+genclient:method={}` ({} {}).", e.name, e.verb, target);
    let body = match e.verb {
        Verb::Get => quote! {
            (&'a self, name: &'a str) -> #returns {
                self.inner.get_as(name, #sub)
            }
        },
        Verb::List => quote! {
            (&'a self, lp: &'a #params::ListParams) -> #returns {
                self.inner.list_as(lp)
            }
        },
        Verb::Create => match &e.subresource {
            Some(s) => quote! {
                (&'a self, name: &'a str, pp: &'a #params::PostParams, input: &'a #input) -> #returns {
                    self.inner.create_as(Some((name, #s)), pp, input)
                }
            },
            None => quote! {
                (&'a self, pp: &'a #params::PostParams, input: &'a #input) -> #returns {
                    self.inner.create_as(None, pp, input)
                }
            },
        },
        Verb::Update => quote! {
            (&'a self, name: &'a str, pp: &'a #params::PostParams, input: &'a #input) -> #returns {
                self.inner.update_as(name, #sub, pp, input)
            }
        },
        Verb::Patch => {
            let generic = format_ident!("P");
            return quote! {
                #[doc = #doc]
                #[inline]
                #vis fn #method<'a, #generic: ::kubegen::__private::serde::Serialize>(
                    &'a self,
                    name: &'a str,
                    pp: &'a #params::PatchParams,
                    patch: &'a #params::Patch<#generic>,
                ) -> #returns {
                    self.inner.patch_as(name, #sub, pp, patch)
                }
            };
        }
        Verb::Apply => quote! {
            (&'a self, name: &'a str, input: &'a #input, field_manager: &'a str, force: bool) -> #returns {
                self.inner.apply_as(name, #sub, input, field_manager, force)
            }
        },
        Verb::ApplyStatus => {
            let sub = e.subresource.as_deref().unwrap_or("status");
            quote! {
                (&'a self, name: &'a str, input: &'a #input, field_manager: &'a str, force: bool) -> #returns {
                    self.inner.apply_as(name, Some(#sub), input, field_manager, force)
                }
            }
        }
        // Validation rejects extensions with these verbs.
        Verb::UpdateStatus | Verb::DeleteCollection | Verb::Watch | Verb::Delete => {
            return TokenStream::new();
        }
    };
    quote! {
        #[doc = #doc]
        #[inline]
        #vis fn #method<'a> #body
    }
}
