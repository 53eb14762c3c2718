//! Apply configurations of Rust types (the CLI's API trees, the derive's input), from the
//! model: a struct with named fields gets a configuration; an enum or tuple struct is a
//! value applied as a whole; list types (with `ListMeta`), generic types, unions and
//! aliases get nothing.
//!
//! A field's configuration type is written from its Rust type alone, so the derive (which
//! sees one type) and the CLI (which sees the package) emit the same tokens: `Option` and
//! `Box` unwrap, `Vec` is a list and a string-keyed map a map of their element's
//! configuration, scalars and Kubernetes' value types (`Quantity`, `Time`, ...) are
//! themselves, and any other type `T` is `<T as HasApplyConfiguration>::ApplyConfiguration`
//! — its generated configuration, wherever it was generated.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::model::{ApplyField, ApplyType, Root, Shape};
use crate::crd::schema::type_args as args;
use crate::crd::serde_attrs;
use crate::ctxt::Ctxt;
use crate::model::{Body, TypeDef};

/// What a type gets.
#[derive(Clone, Debug)]
pub enum Generated {
    /// A configuration struct.
    Config(Box<ApplyType>),
    /// `HasApplyConfiguration` as itself (an enum, a tuple struct).
    Whole(TokenStream),
}

/// Type names set as a whole, whoever defines them: scalars, JSON, and Kubernetes' value
/// types (a definition without properties).
const VALUES: &[&str] = &[
    "String",
    "str",
    "bool",
    "char",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "f32",
    "f64",
    "Value",
    "ByteString",
    "Quantity",
    "IntOrString",
    "Time",
    "MicroTime",
    "RawExtension",
    "Timestamp",
    "DateTime",
    "OffsetDateTime",
];

/// What `ty` gets; `None` for generic types, unions and aliases.
pub fn generated(ty: &TypeDef, cx: &Ctxt) -> Option<Generated> {
    if !ty.generics.params.is_empty() {
        return None;
    }
    let ident = &ty.ident;
    let fields = match &ty.body {
        Body::Struct(syn::Fields::Named(named)) => named,
        Body::Struct(_) | Body::Enum(_) => return Some(Generated::Whole(quote!(#ident))),
        Body::Union | Body::Alias(_) => return None,
    };
    // A list type (`FooList`, with `ListMeta`) is never applied (applyconfiguration-gen
    // skips it too).
    let is_list = fields.named.iter().any(|f| {
        type_path(&f.ty)
            .and_then(|p| p.segments.last())
            .is_some_and(|s| s.ident == "ListMeta")
    });
    if is_list {
        return None;
    }
    let container = serde_attrs::Container::from_attrs(&ty.attrs, cx);
    let flattened = fields
        .named
        .iter()
        .any(|f| serde_attrs::Field::from_attrs(&f.attrs, cx).flatten);
    if container.transparent || container.untagged || container.tag.is_some() || flattened {
        // Its JSON is not one object of its fields: applied whole.
        return Some(Generated::Whole(quote!(#ident)));
    }
    let mut out = Vec::new();
    for f in &fields.named {
        let attrs = serde_attrs::Field::from_attrs(&f.attrs, cx);
        let Some(name) = &f.ident else { continue };
        if attrs.skip {
            continue;
        }
        let rust = name.to_string().trim_start_matches("r#").to_owned();
        let json = attrs
            .rename
            .clone()
            .unwrap_or_else(|| match container.rename_all {
                Some(rule) => rule.field(&rust),
                None => rust.clone(),
            });
        let (ty, shape) = field_type(&f.ty);
        out.push(ApplyField {
            json,
            ident: name.clone(),
            doc: String::new(),
            ty,
            shape,
        });
    }
    let has = |n: &str| out.iter().any(|f| f.json == n);
    let root = ty.resource.as_ref().map(|r| Root {
        api_version: r.api_version(),
        kind: r.kind.clone(),
        object: quote!(#ident),
        namespaced: r.namespaced(),
        status: r.has_status(),
        add_type_meta: !has("apiVersion") && !has("kind"),
        metadata: has("metadata"),
    });
    let vis = &ty.vis;
    Some(Generated::Config(Box::new(ApplyType {
        ident: format_ident!("{}ApplyConfiguration", ident),
        vis: quote!(#vis),
        of: quote!(#ident),
        doc: String::new(),
        fields: out,
        root,
        since: None,
    })))
}

fn type_path(ty: &syn::Type) -> Option<&syn::Path> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => Some(&p.path),
        syn::Type::Group(g) => type_path(&g.elem),
        syn::Type::Paren(p) => type_path(&p.elem),
        _ => None,
    }
}

/// A field's configuration type and shape.
fn field_type(ty: &syn::Type) -> (TokenStream, Shape) {
    let Some(path) = type_path(ty) else {
        return (config_of(ty), Shape::Single);
    };
    let last = path.segments.last().map(|s| s.ident.to_string());
    match (last.as_deref(), args(path).as_slice()) {
        (Some("Option"), [inner]) => field_type(inner),
        (Some("Box"), [inner]) => (config_of(inner), Shape::Boxed),
        (Some("Vec" | "VecDeque"), [inner]) => (config_of(inner), Shape::List),
        (Some("BTreeMap" | "HashMap" | "IndexMap"), [_, value]) => (config_of(value), Shape::Map),
        _ => (config_of(ty), Shape::Single),
    }
}

/// The configuration type of a value of type `ty`.
fn config_of(ty: &syn::Type) -> TokenStream {
    let whole = type_path(ty).is_some_and(|p| {
        p.segments
            .last()
            .is_some_and(|s| VALUES.contains(&s.ident.to_string().as_str()))
    });
    if whole {
        quote!(#ty)
    } else {
        quote!(<#ty as ::kubegen::applyconfig::HasApplyConfiguration>::ApplyConfiguration)
    }
}
