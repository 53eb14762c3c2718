//! The typed client (`FooClient`): one method per verb the markers allow, each a
//! one-line call into the runtime's `ResourceClient<Foo>`, plus the extension methods
//! of `+genclient:method=`. A verb that is not allowed is a method that does not exist.

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
    let Paths {
        client,
        error,
        params,
    } = p;
    match verb {
        Verb::Create => quote! {
            /// Creates `obj`.
            #[inline]
            #vis async fn create(&self, pp: &#params::PostParams, obj: &#kind) -> Result<#kind, #error> {
                self.inner.create(pp, obj).await
            }
        },
        Verb::Update => quote! {
            /// Replaces the object named in `obj` (a stale resourceVersion is a conflict).
            #[inline]
            #vis async fn update(&self, pp: &#params::PostParams, obj: &#kind) -> Result<#kind, #error> {
                self.inner.update(pp, obj).await
            }
        },
        Verb::UpdateStatus => quote! {
            /// Replaces the status subresource of the object named in `obj`.
            #[inline]
            #vis async fn update_status(&self, pp: &#params::PostParams, obj: &#kind) -> Result<#kind, #error> {
                self.inner.update_status(pp, obj).await
            }
        },
        Verb::Delete => quote! {
            /// Deletes `name`: the object (still there while finalizers run) or a Status.
            #[inline]
            #vis async fn delete(
                &self,
                name: &str,
                dp: &#params::DeleteParams,
            ) -> Result<#client::DeleteResponse<#kind>, #error> {
                self.inner.delete(name, dp).await
            }
        },
        Verb::DeleteCollection => quote! {
            /// Deletes every object matching `lp`'s selectors.
            #[inline]
            #vis async fn delete_collection(
                &self,
                dp: &#params::DeleteParams,
                lp: &#params::ListParams,
            ) -> Result<#client::DeleteResponse<#client::ObjectList<#kind>>, #error> {
                self.inner.delete_collection(dp, lp).await
            }
        },
        Verb::Get => quote! {
            /// Gets the object called `name`.
            #[inline]
            #vis async fn get(&self, name: &str) -> Result<#kind, #error> {
                self.inner.get(name).await
            }
        },
        Verb::List => quote! {
            /// One page of objects (honouring `limit` and `continue_token`).
            #[inline]
            #vis async fn list(&self, lp: &#params::ListParams) -> Result<#client::ObjectList<#kind>, #error> {
                self.inner.list(lp).await
            }

            /// Every object, page by page.
            #[inline]
            #vis async fn list_all(&self, lp: &#params::ListParams) -> Result<#client::ObjectList<#kind>, #error> {
                self.inner.list_all(lp).await
            }
        },
        Verb::Watch => quote! {
            /// Watches from `resource_version`.
            #[inline]
            #vis async fn watch(
                &self,
                wp: &#params::WatchParams,
                resource_version: &str,
            ) -> Result<#client::WatchStream<#kind>, #error> {
                self.inner.watch(wp, resource_version).await
            }
        },
        Verb::Patch => quote! {
            /// Patches `name` (merge, JSON, strategic or apply).
            #[inline]
            #vis async fn patch<P: ::kubegen::__private::serde::Serialize>(
                &self,
                name: &str,
                pp: &#params::PatchParams,
                patch: &#params::Patch<P>,
            ) -> Result<#kind, #error> {
                self.inner.patch(name, pp, patch).await
            }
        },
        Verb::Apply => quote! {
            /// Server-side apply of an apply configuration (`FooApplyConfiguration::new(..)`,
            /// or `extract_foo(..)` changed): only the fields it sets are sent and become
            /// `params.field_manager`'s.
            #[inline]
            #vis async fn apply<C>(
                &self,
                config: &C,
                params: &::kubegen::applyconfig::ApplyParams,
            ) -> Result<#kind, #error>
            where
                C: ::kubegen::applyconfig::ApplyConfiguration<Object = #kind>,
            {
                self.inner.apply_configuration(config, params).await
            }
        },
        Verb::ApplyStatus => quote! {
            /// Server-side apply of an apply configuration's `status` to the status
            /// subresource.
            #[inline]
            #vis async fn apply_status<C>(
                &self,
                config: &C,
                params: &::kubegen::applyconfig::ApplyParams,
            ) -> Result<#kind, #error>
            where
                C: ::kubegen::applyconfig::ApplyConfiguration<Object = #kind>,
            {
                self.inner.apply_configuration_status(config, params).await
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
    let Paths {
        client,
        error,
        params,
    } = p;
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
            (&self, name: &str) -> Result<#result, #error> {
                self.inner.get_as(name, #sub).await
            }
        },
        Verb::List => quote! {
            (&self, lp: &#params::ListParams) -> Result<#result, #error> {
                self.inner.list_as(lp).await
            }
        },
        Verb::Create => match &e.subresource {
            Some(s) => quote! {
                (&self, name: &str, pp: &#params::PostParams, input: &#input) -> Result<#result, #error> {
                    self.inner.create_as(Some((name, #s)), pp, input).await
                }
            },
            None => quote! {
                (&self, pp: &#params::PostParams, input: &#input) -> Result<#result, #error> {
                    self.inner.create_as(None, pp, input).await
                }
            },
        },
        Verb::Update => quote! {
            (&self, name: &str, pp: &#params::PostParams, input: &#input) -> Result<#result, #error> {
                self.inner.update_as(name, #sub, pp, input).await
            }
        },
        Verb::Patch => {
            let generic = format_ident!("P");
            return quote! {
                #[doc = #doc]
                #[inline]
                #vis async fn #method<#generic: ::kubegen::__private::serde::Serialize>(
                    &self,
                    name: &str,
                    pp: &#params::PatchParams,
                    patch: &#params::Patch<#generic>,
                ) -> Result<#result, #error> {
                    self.inner.patch_as(name, #sub, pp, patch).await
                }
            };
        }
        Verb::Apply => quote! {
            (&self, name: &str, input: &#input, field_manager: &str, force: bool) -> Result<#result, #error> {
                self.inner.apply_as(name, #sub, input, field_manager, force).await
            }
        },
        Verb::ApplyStatus => {
            let sub = e.subresource.as_deref().unwrap_or("status");
            quote! {
                (&self, name: &str, input: &#input, field_manager: &str, force: bool) -> Result<#result, #error> {
                    self.inner.apply_as(name, Some(#sub), input, field_manager, force).await
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
        #vis async fn #method #body
    }
}
