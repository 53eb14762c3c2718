//! `#[derive(kubegen::Projection)]`: the part of a kind a controller reads, decoded
//! straight from the wire.
//!
//! ```text
//! #[derive(Clone, Debug, kubegen::Projection)]
//! #[projection(of = Pod)]
//! struct PodPlacement {
//!     metadata: ObjectMeta,
//!     #[projection(path = "spec.nodeName")]
//!     node_name: Option<String>,
//!     #[projection(path = "status.phase")]
//!     phase: Option<String>,
//! }
//! ```
//!
//! The fields' paths (JSON names, dot-separated; a field without `path` is read from
//! the top-level key that is its name in camelCase) form a tree. Each inner node becomes a
//! hidden struct that serde's derive decodes: keys of the object that no path names are
//! skipped by serde (`IgnoredAny`, scanned, never built), so a `Pod` is never
//! materialised. `metadata` is decoded whole except `managedFields` and kubectl's
//! `last-applied-configuration` annotation (a copy of the whole object): kept with
//! `#[projection(of = .., keep_managed_fields, keep_last_applied)]`.
//!
//! Emitted beside the hidden tree: `kube_core::Resource` (names and scope of the source
//! kind), `kubegen::Projection`, `Deserialize`, `Serialize` (the partial object, with the
//! source's `apiVersion` and `kind`), and a function the compiler type-checks but nothing
//! calls, which reads every path from a `&Source`: a path naming a field the kind does not
//! have is a compile error there, spanned at the path (`no field `nodeNam` on type
//! `PodSpec``), with fields named as k8s-openapi and `rename_all = "camelCase"` types name
//! them (`podIPs` → `pod_ips`, `type` → `type_`).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::crd::serde_attrs::RenameRule;

/// One field of the projection: where it is read from.
struct Leaf {
    ident: syn::Ident,
    ty: syn::Type,
    /// JSON names from the object's root.
    path: Vec<String>,
    /// The span errors about the path point at (the `path` literal, or the field).
    span: Span,
}

/// A node of the path tree: keys read whole (leaves) and keys descended into.
#[derive(Default)]
struct Node {
    leaves: Vec<(String, usize)>,
    children: Vec<(String, Node)>,
}

impl Node {
    fn child(&mut self, key: &str) -> &mut Node {
        let at = match self.children.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                self.children.push((key.to_owned(), Node::default()));
                self.children.len() - 1
            }
        };
        &mut self.children[at].1
    }
}

/// The derive's expansion, or every error it found, spanned.
pub fn expand_derive_projection(input: &syn::DeriveInput) -> TokenStream {
    match expand(input) {
        Ok(tokens) => tokens,
        Err(errors) => errors.to_compile_error(),
    }
}

/// Collects errors so that all are reported at once.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }
}

struct Options {
    source: syn::Type,
    keep_managed_fields: bool,
    keep_last_applied: bool,
}

fn options(input: &syn::DeriveInput, errors: &mut Errors) -> Option<Options> {
    let mut source = None;
    let mut keep_managed_fields = false;
    let mut keep_last_applied = false;
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("projection"))
    {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("of") {
                source = Some(meta.value()?.parse::<syn::Type>()?);
                Ok(())
            } else if meta.path.is_ident("keep_managed_fields") {
                keep_managed_fields = true;
                Ok(())
            } else if meta.path.is_ident("keep_last_applied") {
                keep_last_applied = true;
                Ok(())
            } else {
                Err(meta.error(
                    "unknown projection option: expected `of = Kind`, `keep_managed_fields` \
                     or `keep_last_applied`",
                ))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    match source {
        Some(source) => Some(Options {
            source,
            keep_managed_fields,
            keep_last_applied,
        }),
        None => {
            errors.at(
                input.ident.span(),
                "a projection names the kind it reads: `#[projection(of = Kind)]`",
            );
            None
        }
    }
}

/// The JSON names of a field's path: its `path = "a.b"`, or its name in camelCase.
fn leaf(field: &syn::Field, errors: &mut Errors) -> Option<Leaf> {
    let ident = field.ident.clone()?;
    let mut path = None;
    for attr in field
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("projection"))
    {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("path") {
                path = Some(meta.value()?.parse::<syn::LitStr>()?);
                Ok(())
            } else {
                Err(meta.error("unknown projection field option: expected `path = \"a.b\"`"))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    let (segments, span) = match &path {
        Some(lit) => (
            lit.value().split('.').map(str::to_owned).collect(),
            lit.span(),
        ),
        None => (vec![camel(&ident.to_string())], ident.span()),
    };
    if segments.iter().any(|s| s.is_empty()) {
        errors.at(
            span,
            "a path is JSON field names separated by dots: `spec.nodeName`",
        );
        return None;
    }
    if let Some(first) = segments.first()
        && ["metadata", "apiVersion", "kind"].contains(&first.as_str())
    {
        errors.at(
            span,
            format!(
                "`{first}` is not projected: `metadata` is the `metadata: ObjectMeta` field, \
                 `apiVersion` and `kind` are the source kind's"
            ),
        );
        return None;
    }
    Some(Leaf {
        ident,
        ty: field.ty.clone(),
        path: segments,
        span,
    })
}

fn expand(input: &syn::DeriveInput) -> Result<TokenStream, syn::Error> {
    let mut errors = Errors::default();
    let options = options(input, &mut errors);
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.span(),
            "a projection has no generic parameters",
        );
    }
    let fields = match &input.data {
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Named(named),
            ..
        }) => Some(&named.named),
        _ => {
            errors.at(
                input.ident.span(),
                "a projection is a struct with named fields (`metadata` and the fields it reads)",
            );
            None
        }
    };
    let mut has_metadata = false;
    let mut leaves = Vec::new();
    for field in fields.into_iter().flatten() {
        if field.ident.as_ref().is_some_and(|i| i == "metadata") {
            has_metadata = true;
            continue;
        }
        if let Some(leaf) = leaf(field, &mut errors) {
            leaves.push(leaf);
        }
    }
    if fields.is_some() && !has_metadata {
        errors.at(
            input.ident.span(),
            "a projection keeps the object's metadata: add `metadata: ObjectMeta`",
        );
    }
    let root = tree(&leaves, &mut errors);
    if let Some(all) = errors.0 {
        return Err(all);
    }
    let Some(options) = options else {
        return Ok(TokenStream::new());
    };
    Ok(emit(input, &options, &leaves, &root))
}

/// The path tree; a path that is a prefix of another (read whole and in part), or named
/// twice, is an error.
fn tree(leaves: &[Leaf], errors: &mut Errors) -> Node {
    let mut root = Node::default();
    for (i, leaf) in leaves.iter().enumerate() {
        for (j, other) in leaves[..i].iter().enumerate() {
            let shorter = leaf.path.len().min(other.path.len());
            if leaf.path[..shorter] == other.path[..shorter] {
                let what = if leaf.path.len() == other.path.len() {
                    "the same path"
                } else {
                    "overlapping paths (one reads the other whole)"
                };
                errors.at(
                    leaf.span,
                    format!(
                        "`{}` and `{}` read {what}: `{}`",
                        leaves[j].ident,
                        leaf.ident,
                        leaf.path.join(".")
                    ),
                );
            }
        }
        let (last, inner) = leaf.path.split_last().expect("paths are never empty");
        let mut node = &mut root;
        for key in inner {
            node = node.child(key);
        }
        node.leaves.push((last.clone(), i));
    }
    root
}

/// `node_name` → `nodeName` (serde's `rename_all = "camelCase"`).
fn camel(snake: &str) -> String {
    RenameRule::Camel.field(snake.trim_start_matches("r#"))
}

/// The Rust field k8s-openapi (and a `rename_all = "camelCase"` type) names a JSON field
/// by: `nodeName` → `node_name`, `podIPs` → `pod_ips`, `hostIP` → `host_ip`,
/// `type` → `type_`.
fn rust_field(json: &str) -> String {
    let chars: Vec<char> = json.chars().collect();
    let mut out = String::with_capacity(json.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            out.push('_');
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next = chars.get(i + 1).copied();
            // An acronym's plural (`IPs` then the end or a new word) stays one word.
            let plural_acronym = next == Some('s')
                && chars
                    .get(i + 2)
                    .is_none_or(|after| after.is_ascii_uppercase());
            let starts_word = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase()
                    && next.is_some_and(|n| n.is_ascii_lowercase())
                    && !plural_acronym);
            if starts_word && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    if matches!(
        out.as_str(),
        "type" | "continue" | "ref" | "as" | "enum" | "match" | "loop" | "in" | "for" | "mod"
    ) {
        out.push('_');
    }
    out
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// A node of the path tree with the numbers of its children. The numbers (depth-first,
/// the root 0) name the node's hidden struct, its serializer and its binding.
struct Numbered<'a> {
    node: &'a Node,
    children: Vec<usize>,
}

/// The tree's nodes in depth-first order, each at its number.
fn numbered(root: &Node) -> Vec<Numbered<'_>> {
    fn visit<'a>(node: &'a Node, out: &mut Vec<Numbered<'a>>) -> usize {
        let at = out.len();
        out.push(Numbered {
            node,
            children: Vec::new(),
        });
        let children = node.children.iter().map(|(_, c)| visit(c, out)).collect();
        out[at].children = children;
        at
    }
    let mut out = Vec::new();
    visit(root, &mut out);
    out
}

/// Node `at`'s hidden struct and serializer.
fn hidden(at: usize) -> (syn::Ident, syn::Ident) {
    (
        format_ident!("__ProjectionNode{}", at),
        format_ident!("__ProjectionSer{}", at),
    )
}

/// The local node `at` is decoded into.
fn binding_of(at: usize) -> syn::Ident {
    if at == 0 {
        format_ident!("__root")
    } else {
        format_ident!("__n{}", at)
    }
}

fn emit(input: &syn::DeriveInput, options: &Options, leaves: &[Leaf], root: &Node) -> TokenStream {
    let ident = &input.ident;
    let source = &options.source;
    let serde = quote!(::kubegen::__private::serde);
    let serde_str = "::kubegen::__private::serde";
    let kube_core = quote!(::kubegen::__private::kube_core);
    let private = quote!(::kubegen::projection::__private);

    // The hidden decoding structs, and the moves out of them into the projection.
    let mut structs = Vec::new();
    let mut serializers = Vec::new();
    let mut lets = Vec::new();
    let mut inits = Vec::new();
    for (at, Numbered { node, children }) in numbered(root).iter().enumerate() {
        let (name, ser) = hidden(at);
        let binding = binding_of(at);
        let mut fields = Vec::new();
        let mut entries = Vec::new();
        if at == 0 {
            let strip = match (options.keep_managed_fields, options.keep_last_applied) {
                (true, true) => None,
                (false, false) => Some("metadata"),
                (true, false) => Some("metadata_keep_managed_fields"),
                (false, true) => Some("metadata_keep_last_applied"),
            };
            let metadata = match strip {
                None => quote!(#[serde(default)]),
                Some(f) => {
                    let path = format!("::kubegen::projection::__private::{f}");
                    quote!(#[serde(default, deserialize_with = #path)])
                }
            };
            fields.push(quote! {
                #metadata
                metadata: #kube_core::ObjectMeta,
            });
            entries.push(quote! {
                #serde::ser::SerializeMap::serialize_entry(
                    &mut map, "apiVersion",
                    &<#source as #kube_core::Resource>::api_version(&()),
                )?;
                #serde::ser::SerializeMap::serialize_entry(
                    &mut map, "kind", &<#source as #kube_core::Resource>::kind(&()),
                )?;
                #serde::ser::SerializeMap::serialize_entry(
                    &mut map, "metadata", &self.0.metadata,
                )?;
            });
        }
        for (j, (key, leaf)) in node.leaves.iter().enumerate() {
            let f = format_ident!("__f{}", j);
            let Leaf { ty, ident, .. } = &leaves[*leaf];
            fields.push(quote! {
                #[serde(rename = #key, default)]
                #f: #ty,
            });
            inits.push(quote!(#ident: #binding.#f));
            entries.push(if is_option(ty) {
                quote! {
                    if let ::core::option::Option::Some(value) = &self.0.#ident {
                        #serde::ser::SerializeMap::serialize_entry(&mut map, #key, value)?;
                    }
                }
            } else {
                quote! {
                    #serde::ser::SerializeMap::serialize_entry(&mut map, #key, &self.0.#ident)?;
                }
            });
        }
        for (k, ((key, _), &child_at)) in node.children.iter().zip(children).enumerate() {
            let c = format_ident!("__c{}", k);
            let (child, child_ser) = hidden(child_at);
            let child_binding = binding_of(child_at);
            fields.push(quote! {
                #[serde(rename = #key, default)]
                #c: ::core::option::Option<#child>,
            });
            lets.push(quote! {
                let #child_binding = #binding.#c.unwrap_or_default();
            });
            entries.push(quote! {
                #serde::ser::SerializeMap::serialize_entry(&mut map, #key, &#child_ser(self.0))?;
            });
        }
        structs.push(quote! {
            #[derive(#serde::Deserialize, ::core::default::Default)]
            #[serde(crate = #serde_str)]
            struct #name {
                #(#fields)*
            }
        });
        serializers.push(quote! {
            struct #ser<'a>(&'a #ident);

            impl #serde::Serialize for #ser<'_> {
                fn serialize<S: #serde::Serializer>(
                    &self,
                    serializer: S,
                ) -> ::core::result::Result<S::Ok, S::Error> {
                    let mut map = #serde::Serializer::serialize_map(serializer, None)?;
                    #(#entries)*
                    #serde::ser::SerializeMap::end(map)
                }
            }
        });
    }
    let (root_name, root_ser) = hidden(0);
    let checks = leaves.iter().map(|leaf| check(leaf, &private));

    quote! {
        const _: () = {
            #(#structs)*
            #(#serializers)*

            impl<'de> #serde::Deserialize<'de> for #ident {
                fn deserialize<D: #serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> ::core::result::Result<Self, D::Error> {
                    let __root = <#root_name as #serde::Deserialize>::deserialize(deserializer)?;
                    #(#lets)*
                    ::core::result::Result::Ok(Self {
                        metadata: __root.metadata,
                        #(#inits,)*
                    })
                }
            }

            impl #serde::Serialize for #ident {
                fn serialize<S: #serde::Serializer>(
                    &self,
                    serializer: S,
                ) -> ::core::result::Result<S::Ok, S::Error> {
                    #serde::Serialize::serialize(&#root_ser(self), serializer)
                }
            }

            impl #kube_core::Resource for #ident {
                type DynamicType = ();
                type Scope = <#source as #kube_core::Resource>::Scope;

                fn kind(dt: &()) -> ::std::borrow::Cow<'_, str> {
                    <#source as #kube_core::Resource>::kind(dt)
                }
                fn group(dt: &()) -> ::std::borrow::Cow<'_, str> {
                    <#source as #kube_core::Resource>::group(dt)
                }
                fn version(dt: &()) -> ::std::borrow::Cow<'_, str> {
                    <#source as #kube_core::Resource>::version(dt)
                }
                fn api_version(dt: &()) -> ::std::borrow::Cow<'_, str> {
                    <#source as #kube_core::Resource>::api_version(dt)
                }
                fn plural(dt: &()) -> ::std::borrow::Cow<'_, str> {
                    <#source as #kube_core::Resource>::plural(dt)
                }
                fn meta(&self) -> &#kube_core::ObjectMeta {
                    &self.metadata
                }
                fn meta_mut(&mut self) -> &mut #kube_core::ObjectMeta {
                    &mut self.metadata
                }
            }

            impl ::kubegen::projection::Projection for #ident {
                type Source = #source;
            }

            /// Type-checked, never called: every path is a field of the source kind.
            #[allow(dead_code, clippy::all)]
            fn __projection_paths(source: &#source) {
                #[allow(unused_imports)]
                use #private::{ViaOption as _, ViaValue as _};
                #(#checks)*
            }
        };
    }
}

/// Reads `leaf`'s path from `source`, through `Option`s (k8s-openapi's optional
/// `spec`/`status`/fields), spanned at the path so a wrong name is reported there.
fn check(leaf: &Leaf, private: &TokenStream) -> TokenStream {
    let span = leaf.span;
    let (last, inner) = leaf.path.split_last().expect("paths are never empty");
    let last = syn::Ident::new(&rust_field(last), span);
    let mut body = quote_spanned!(span=> { let _ = &value.#last; });
    for key in inner.iter().rev() {
        let field = syn::Ident::new(&rust_field(key), span);
        body = quote_spanned! {span=>
            { let _ = (&#private::Probe(&value.#field)).__step().map(|value| #body); }
        };
    }
    quote_spanned! {span=>
        { let value = source; #body }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_fields_are_k8s_openapis() {
        assert_eq!(rust_field("nodeName"), "node_name");
        assert_eq!(rust_field("podIPs"), "pod_ips");
        assert_eq!(rust_field("podIP"), "pod_ip");
        assert_eq!(rust_field("hostIPs"), "host_ips");
        assert_eq!(rust_field("ipFamilyPolicy"), "ip_family_policy");
        assert_eq!(rust_field("clusterIPs"), "cluster_ips");
        assert_eq!(rust_field("type"), "type_");
        assert_eq!(rust_field("phase"), "phase");
        assert_eq!(rust_field("containerID"), "container_id");
        assert_eq!(rust_field("URLPath"), "url_path");
    }

    #[test]
    fn camel_of_a_field_name() {
        assert_eq!(camel("node_name"), "nodeName");
        assert_eq!(camel("phase"), "phase");
    }

    fn errors_of(src: &str) -> String {
        let input: syn::DeriveInput = syn::parse_str(src).unwrap();
        expand_derive_projection(&input).to_string()
    }

    #[test]
    fn shape_errors_are_reported_together() {
        let out = errors_of(
            "struct P { #[projection(path = \"spec.nodeName\")] a: Option<String>, \
             #[projection(path = \"spec\")] b: Option<String> }",
        );
        assert!(
            out.contains("a projection names the kind it reads"),
            "{out}"
        );
        assert!(out.contains("add `metadata: ObjectMeta`"), "{out}");
        assert!(out.contains("overlapping paths"), "{out}");
    }

    #[test]
    fn bad_paths_and_options_are_errors() {
        let out = errors_of(
            "#[projection(of = Pod, keep)] struct P { metadata: ObjectMeta, \
             #[projection(path = \"spec..x\")] a: String, \
             #[projection(path = \"metadata.name\")] b: String, \
             #[projection(path = \"a\")] c: String, #[projection(path = \"a\")] d: String }",
        );
        assert!(out.contains("unknown projection option"), "{out}");
        assert!(out.contains("separated by dots"), "{out}");
        assert!(out.contains("`metadata` is not projected"), "{out}");
        assert!(out.contains("read the same path"), "{out}");
    }
}
