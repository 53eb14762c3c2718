//! Apply configuration → tokens: the struct (every field optional, serialized only when
//! set), its builder methods, its `HasApplyConfiguration` impl and, for a resource, the
//! constructor, metadata shortcuts, the `ApplyConfiguration` impl and the extractors.
//! Generated code names the runtime only through `::kubegen::` paths.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::model::{ApplyField, ApplyType, Root, Shape};
use crate::expand::names;

/// Everything generated for one configuration.
pub fn apply_configuration(t: &ApplyType) -> TokenStream {
    let ident = &t.ident;
    let (of, vis) = (&t.of, &t.vis);
    let mut doc = format!(
        " An apply configuration for `{}`: every field optional, only those set are sent \
         (and owned).",
        t.ident.to_string().trim_end_matches("ApplyConfiguration"),
    );
    if !t.doc.is_empty() {
        doc.push_str("\n\n");
        doc.push_str(&t.doc);
    }
    let doc = doc_attrs(&doc);
    let type_meta = t.root.as_ref().filter(|r| r.add_type_meta).map(|_| {
        quote! {
            /// `apiVersion` (set by `new`).
            #[serde(rename = "apiVersion", default, skip_serializing_if = "Option::is_none")]
            pub api_version: Option<::std::string::String>,
            /// `kind` (set by `new`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub kind: Option<::std::string::String>,
        }
    });
    let fields = t.fields.iter().map(field);
    let builders = t.fields.iter().map(builder);
    let constructor = match &t.root {
        Some(root) => root_constructor(root),
        None => quote! {
            /// An empty configuration.
            #[inline]
            pub fn new() -> Self {
                Self::default()
            }
        },
    };
    let shortcuts = t
        .root
        .as_ref()
        .filter(|r| r.metadata)
        .map(|_| metadata_shortcuts());
    let root_items = t.root.as_ref().map(|root| root_items(vis, ident, root));
    let mut has_configuration = quote! {
        #[automatically_derived]
        impl ::kubegen::applyconfig::HasApplyConfiguration for #of {
            type ApplyConfiguration = #ident;
        }
    };
    if let Some(since) = &t.since {
        let gate = format_ident!("k8s_if_ge_{}", since);
        has_configuration = quote! {
            ::kubegen::__private::k8s_openapi::#gate! {
                #has_configuration
            }
        };
    }
    quote! {
        #doc
        #[derive(Clone, Debug, Default, PartialEq, ::kubegen::__private::serde::Serialize, ::kubegen::__private::serde::Deserialize)]
        #[serde(crate = "::kubegen::__private::serde")]
        #vis struct #ident {
            #type_meta
            #(#fields)*
        }

        impl #ident {
            #constructor
            #shortcuts
            #(#builders)*
        }

        #has_configuration

        #root_items
    }
}

/// `impl HasApplyConfiguration for T { type ApplyConfiguration = T; }`: a type applied as
/// a whole (an enum, a tuple struct, a scalar definition).
pub fn applied_whole(of: &TokenStream) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl ::kubegen::applyconfig::HasApplyConfiguration for #of {
            type ApplyConfiguration = #of;
        }
    }
}

fn slot(f: &ApplyField) -> TokenStream {
    let ty = &f.ty;
    match f.shape {
        Shape::Single => quote!(#ty),
        Shape::Boxed => quote!(::std::boxed::Box<#ty>),
        Shape::List => quote!(::std::vec::Vec<#ty>),
        Shape::Map => quote!(::std::collections::BTreeMap<::std::string::String, #ty>),
    }
}

fn field(f: &ApplyField) -> TokenStream {
    let (ident, json) = (&f.ident, &f.json);
    let doc = field_doc(f);
    let slot = slot(f);
    let rename = (ident.to_string().trim_start_matches("r#") != json.as_str())
        .then(|| quote!(rename = #json,));
    let doc = doc_attrs(&doc);
    quote! {
        #doc
        #[serde(#rename default, skip_serializing_if = "Option::is_none")]
        pub #ident: Option<#slot>,
    }
}

fn field_doc(f: &ApplyField) -> String {
    if f.doc.is_empty() {
        format!(" `{}`.", f.json)
    } else {
        f.doc.clone()
    }
}

/// One `#[doc]` attribute per line (prettyplease prints them as `///` lines).
fn doc_attrs(text: &str) -> TokenStream {
    text.split('\n')
        .map(|line| quote!(#[doc = #line]))
        .collect()
}

fn builder(f: &ApplyField) -> TokenStream {
    let ident = &f.ident;
    let ty = &f.ty;
    let name = ident.to_string();
    let method = format_ident!("with_{}", name.trim_start_matches("r#"));
    match f.shape {
        Shape::Single | Shape::Boxed => {
            let doc = format!(" Sets `{}`.", f.json);
            let value = if f.shape == Shape::Boxed {
                quote!(::std::boxed::Box::new(value.into()))
            } else {
                quote!(value.into())
            };
            quote! {
                #[doc = #doc]
                #[must_use]
                pub fn #method(mut self, value: impl Into<#ty>) -> Self {
                    self.#ident = Some(#value);
                    self
                }
            }
        }
        Shape::List => {
            let doc = format!(" Appends to `{}` (call it again to add more).", f.json);
            quote! {
                #[doc = #doc]
                #[must_use]
                pub fn #method(mut self, values: impl IntoIterator<Item = impl Into<#ty>>) -> Self {
                    self.#ident
                        .get_or_insert_with(::std::vec::Vec::new)
                        .extend(values.into_iter().map(Into::into));
                    self
                }
            }
        }
        Shape::Map => {
            let doc = format!(" Puts entries into `{}` (replacing equal keys).", f.json);
            quote! {
                #[doc = #doc]
                #[must_use]
                pub fn #method(
                    mut self,
                    entries: impl IntoIterator<Item = (impl Into<::std::string::String>, impl Into<#ty>)>,
                ) -> Self {
                    let map = self.#ident.get_or_insert_with(::std::collections::BTreeMap::new);
                    for (k, v) in entries {
                        map.insert(k.into(), v.into());
                    }
                    self
                }
            }
        }
    }
}

fn root_constructor(root: &Root) -> TokenStream {
    let (api_version, kind) = (&root.api_version, &root.kind);
    let doc = if root.namespaced {
        format!(" A `{kind}` named `name` in `namespace` (client-go's `{kind}(name, namespace)`).")
    } else {
        format!(" A `{kind}` named `name` (client-go's `{kind}(name)`).")
    };
    let (params, namespace) = if root.namespaced {
        (
            quote!(name: impl Into<::std::string::String>, namespace: impl Into<::std::string::String>),
            quote!(.with_namespace(namespace)),
        )
    } else {
        (quote!(name: impl Into<::std::string::String>), quote!())
    };
    quote! {
        #[doc = #doc]
        pub fn new(#params) -> Self {
            Self {
                api_version: Some(#api_version.into()),
                kind: Some(#kind.into()),
                ..Self::default()
            }
            .with_name(name)
            #namespace
        }
    }
}

fn metadata_shortcuts() -> TokenStream {
    let one = |method: &str, doc: &str, arg: TokenStream| {
        let method = format_ident!("{method}");
        let doc = format!(" {doc}");
        quote! {
            #[doc = #doc]
            #[must_use]
            pub fn #method(mut self, #arg) -> Self {
                self.metadata = Some(self.metadata.take().unwrap_or_default().#method(value));
                self
            }
        }
    };
    let string = quote!(value: impl Into<::std::string::String>);
    let entries = quote!(value: impl IntoIterator<Item = (impl Into<::std::string::String>, impl Into<::std::string::String>)>);
    let strings = quote!(value: impl IntoIterator<Item = impl Into<::std::string::String>>);
    let owners = quote!(value: impl IntoIterator<Item = ::kubegen::kubernetes::applyconfiguration::meta::v1::OwnerReferenceApplyConfiguration>);
    [
        one("with_name", "Sets `metadata.name`.", string.clone()),
        one(
            "with_namespace",
            "Sets `metadata.namespace`.",
            string.clone(),
        ),
        one(
            "with_labels",
            "Puts entries into `metadata.labels`.",
            entries.clone(),
        ),
        one(
            "with_annotations",
            "Puts entries into `metadata.annotations`.",
            entries,
        ),
        one(
            "with_finalizers",
            "Appends to `metadata.finalizers`.",
            strings,
        ),
        one(
            "with_owner_references",
            "Appends to `metadata.ownerReferences`.",
            owners,
        ),
    ]
    .into_iter()
    .collect()
}

fn root_items(vis: &TokenStream, ident: &proc_macro2::Ident, root: &Root) -> TokenStream {
    let object = &root.object;
    let kind_snake = names::snake(&root.kind);
    let extract = format_ident!("extract_{}", kind_snake);
    let doc = format!(
        " The `{kind}` apply configuration holding exactly the fields `field_manager` owns \
         in `obj` through apply (client-go's `Extract{kind}`): change it and apply it again \
         to update only those fields.",
        kind = root.kind
    );
    let status = root.status.then(|| {
        let extract_status = format_ident!("extract_{}_status", kind_snake);
        let doc = format!(
            " As [`{extract}`], for the fields `field_manager` owns through the status \
             subresource (client-go's `Extract{}Status`).",
            root.kind
        );
        quote! {
            #[doc = #doc]
            #vis fn #extract_status(
                obj: &#object,
                field_manager: &str,
            ) -> Result<#ident, ::kubegen::applyconfig::ExtractError> {
                ::kubegen::applyconfig::extract(obj, field_manager, "status")
            }
        }
    });
    let (name, namespace) = if root.metadata {
        (
            quote!(self.metadata.as_ref().and_then(|m| m.name.as_deref())),
            quote!(self.metadata.as_ref().and_then(|m| m.namespace.as_deref())),
        )
    } else {
        (quote!(None), quote!(None))
    };
    quote! {
        #[automatically_derived]
        impl ::kubegen::applyconfig::ApplyConfiguration for #ident {
            type Object = #object;
            #[inline]
            fn name(&self) -> Option<&str> {
                #name
            }
            #[inline]
            fn namespace(&self) -> Option<&str> {
                #namespace
            }
        }

        #[doc = #doc]
        #vis fn #extract(
            obj: &#object,
            field_manager: &str,
        ) -> Result<#ident, ::kubegen::applyconfig::ExtractError> {
            ::kubegen::applyconfig::extract(obj, field_manager, "")
        }

        #status
    }
}
