//! [`super::model`] → Rust source: the version module's `types.rs` and the `mod.rs`
//! files of the tree (`<dir>/mod.rs`, `<dir>/<group>/mod.rs`,
//! `<dir>/<group>/<version>/mod.rs` with `+groupName` and `+k8s:deepcopy-gen=package`,
//! declaring the `zz_generated_*` modules `kubegen-codegen update` writes), formatted
//! by prettyplease under the boilerplate and the generated-code line.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::docs::doc_lines;
use super::model::{Body, Field, Module, RustType, TypeDef};
use crate::render::{Boilerplate, render_file};

/// Which imports the rendered types use.
#[derive(Default)]
struct Uses {
    btree_map: bool,
    object_meta: bool,
    time: bool,
    int_or_string: bool,
    byte_string: bool,
}

fn ty_tokens(ty: &RustType, uses: &mut Uses) -> TokenStream {
    match ty {
        RustType::String => quote!(String),
        RustType::Bool => quote!(bool),
        RustType::I32 => quote!(i32),
        RustType::I64 => quote!(i64),
        RustType::F32 => quote!(f32),
        RustType::F64 => quote!(f64),
        RustType::Time => {
            uses.time = true;
            quote!(Time)
        }
        RustType::ByteString => {
            uses.byte_string = true;
            quote!(ByteString)
        }
        RustType::IntOrString => {
            uses.int_or_string = true;
            quote!(IntOrString)
        }
        RustType::ObjectMeta => {
            uses.object_meta = true;
            quote!(ObjectMeta)
        }
        RustType::Json => quote!(serde_json::Value),
        RustType::Vec(inner) => {
            let inner = ty_tokens(inner, uses);
            quote!(Vec<#inner>)
        }
        RustType::Option(inner) => {
            let inner = ty_tokens(inner, uses);
            quote!(Option<#inner>)
        }
        RustType::Map(inner) => {
            uses.btree_map = true;
            let inner = ty_tokens(inner, uses);
            quote!(BTreeMap<String, #inner>)
        }
        RustType::Named(n) => {
            let ident = format_ident!("{}", n);
            quote!(#ident)
        }
    }
}

/// Doc attributes: the description's lines, then (after a blank line) the markers;
/// `#[allow(missing_docs)]` when there is neither, since the CRD documents nothing there.
fn docs(doc: Option<&str>, markers: &[String]) -> TokenStream {
    let mut lines: Vec<String> = doc.map(doc_lines).unwrap_or_default();
    if !markers.is_empty() {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.extend(markers.iter().map(|m| format!(" +{m}")));
    }
    if lines.is_empty() {
        return quote!(#[allow(missing_docs)]);
    }
    // Marker lines are read by the generator, not by readers: their values (JSON paths,
    // CEL rules, patterns) are not Markdown, and escaping them would change them.
    let allow = markers
        .iter()
        .any(|m| m.contains(['[', ']', '<', '>']) || m.contains("http://") || m.contains("https://"))
        .then(|| {
            quote!(#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags, rustdoc::bare_urls)])
        });
    quote!(#(#[doc = #lines])* #allow)
}

fn field_tokens(f: &Field, uses: &mut Uses) -> TokenStream {
    let ident = format_ident!("{}", f.rust_name);
    let ty = ty_tokens(&f.ty, uses);
    if f.flatten {
        let doc = docs(f.doc.as_deref(), &[]);
        return quote! {
            #doc
            #[serde(flatten)]
            pub #ident: #ty,
        };
    }
    let mut doc = docs(f.doc.as_deref(), &f.markers);
    if f.doc.is_none() && f.markers.is_empty() {
        // `+optional` / `+required` say what the type says, and document the field.
        let line = if f.optional {
            " +optional"
        } else {
            " +required"
        };
        doc = quote!(#[doc = #line]);
    }
    let rename = super::names::needs_rename(&f.rust_name, &f.json_name).then(|| {
        let json = &f.json_name;
        quote!(rename = #json,)
    });
    if f.optional {
        quote! {
            #doc
            #[serde(default, #rename skip_serializing_if = "Option::is_none")]
            pub #ident: Option<#ty>,
        }
    } else {
        let attr = rename.map(|r| quote!(#[serde(#r)]));
        quote! {
            #doc
            #attr
            pub #ident: #ty,
        }
    }
}

/// Whether a value of `ty` has a `Default` (k8s-openapi's `Time` has none), given the
/// module's types without one.
fn has_default(ty: &RustType, without: &BTreeSet<String>) -> bool {
    match ty {
        RustType::Time => false,
        RustType::Named(n) => !without.contains(n),
        _ => true,
    }
}

/// The module's types that cannot derive `Default`: those with a required field (or a
/// newtype's value) without one, to a fixed point.
fn without_default(types: &[TypeDef]) -> BTreeSet<String> {
    let mut without = BTreeSet::new();
    loop {
        let before = without.len();
        for t in types {
            let lacks = match &t.body {
                Body::Struct(fields) => fields
                    .iter()
                    .any(|f| !f.optional && !has_default(&f.ty, &without)),
                Body::Newtype(inner) => !has_default(inner, &without),
                Body::Enum { .. } => false,
            };
            if lacks {
                without.insert(t.name.clone());
            }
        }
        if without.len() == before {
            return without;
        }
    }
}

fn type_tokens(t: &TypeDef, defaults: bool, uses: &mut Uses) -> TokenStream {
    let ident = format_ident!("{}", t.name);
    let doc = docs(t.doc.as_deref(), &t.markers);
    let default = defaults.then(|| quote!(Default,));
    match &t.body {
        Body::Struct(fields) => {
            let fields: Vec<TokenStream> = fields.iter().map(|f| field_tokens(f, uses)).collect();
            quote! {
                #doc
                #[derive(Clone, Debug, #default PartialEq, Serialize, Deserialize)]
                #[serde(rename_all = "camelCase")]
                pub struct #ident {
                    #(#fields)*
                }
            }
        }
        Body::Newtype(inner) => {
            let inner = ty_tokens(inner, uses);
            quote! {
                #doc
                #[derive(Clone, Debug, #default PartialEq, Serialize, Deserialize)]
                pub struct #ident(pub #inner);
            }
        }
        Body::Enum { variants, default } => {
            let variants = variants.iter().enumerate().map(|(i, v)| {
                let vident = format_ident!("{}", v.name);
                let value = &v.value;
                let vdoc = if value.contains('`') || value.trim() != value || value.is_empty() {
                    format!(" The value {value:?}.")
                } else {
                    format!(" `{value}`")
                };
                let rename = (v.name != v.value).then(|| quote!(#[serde(rename = #value)]));
                let default = (i == *default).then(|| quote!(#[default]));
                quote! {
                    #[doc = #vdoc]
                    #default
                    #rename
                    #vident,
                }
            });
            quote! {
                #doc
                #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
                #[allow(clippy::enum_variant_names)]
                pub enum #ident {
                    #(#variants)*
                }
            }
        }
    }
}

/// `types.rs` of a version module.
pub fn types_file(module: &Module, boilerplate: &Boilerplate) -> Result<String, syn::Error> {
    let mut uses = Uses::default();
    let without = without_default(&module.types);
    let types: Vec<TokenStream> = module
        .types
        .iter()
        .map(|t| type_tokens(t, !without.contains(&t.name), &mut uses))
        .collect();
    let mut imports = Vec::new();
    if uses.btree_map {
        imports.push(quote!(
            use std::collections::BTreeMap;
        ));
    }
    if uses.byte_string {
        imports.push(quote!(
            use k8s_openapi::ByteString;
        ));
    }
    match (uses.object_meta, uses.time) {
        (true, true) => imports.push(quote!(
            use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
        )),
        (true, false) => {
            imports.push(quote!(
                use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
            ));
        }
        (false, true) => {
            imports.push(quote!(
                use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
            ));
        }
        (false, false) => {}
    }
    if uses.int_or_string {
        imports.push(quote!(
            use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        ));
    }
    imports.push(quote!(
        use serde::{Deserialize, Serialize};
    ));
    let head = format!(
        " The types of {}/{}, imported from the CustomResourceDefinition{} {} by",
        module.group,
        module.version,
        if module.crds.len() == 1 { "" } else { "s" },
        module
            .crds
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let tail = " `kubegen-codegen import-crd`.";
    render_file(
        quote! {
            #![doc = #head]
            #![doc = #tail]
            #(#imports)*
            #(#types)*
        },
        boilerplate,
    )
}

/// `mod.rs` of a version module.
pub fn version_mod(
    module: &Module,
    input_module: &str,
    boilerplate: &Boilerplate,
) -> Result<String, syn::Error> {
    let lines = [
        format!(
            " {}/{}, imported from CustomResourceDefinitions by `kubegen-codegen import-crd`.",
            module.group, module.version
        ),
        " `kubegen-codegen update --input-module ".to_owned() + input_module + "` generates",
        " the `zz_generated_*` modules beside it and the clients.".to_owned(),
        String::new(),
        format!(" +groupName={}", module.group),
        " +k8s:deepcopy-gen=package".to_owned(),
    ];
    render_file(
        quote! {
            #(#![doc = #lines])*
            #[rustfmt::skip]
            mod types;
            #[rustfmt::skip]
            mod zz_generated_deepcopy;
            #[rustfmt::skip]
            mod zz_generated_resource;
            pub use types::*;
        },
        boilerplate,
    )
}

/// `mod.rs` of a group directory (`versions` sorted).
pub fn group_mod(
    group: &str,
    versions: &[String],
    boilerplate: &Boilerplate,
) -> Result<String, syn::Error> {
    let doc = format!(" The `{group}` API group.");
    let mods = versions.iter().map(|v| format_ident!("{}", v));
    render_file(
        quote! {
            #![doc = #doc]
            #(pub mod #mods;)*
        },
        boilerplate,
    )
}

/// `mod.rs` of the output directory (`groups` are directory names, sorted).
pub fn root_mod(groups: &[String], boilerplate: &Boilerplate) -> Result<String, syn::Error> {
    let doc = " API types imported from CustomResourceDefinitions by `kubegen-codegen import-crd`.";
    let mods = groups.iter().map(|g| format_ident!("{}", g));
    render_file(
        quote! {
            #![doc = #doc]
            #(pub mod #mods;)*
        },
        boilerplate,
    )
}
