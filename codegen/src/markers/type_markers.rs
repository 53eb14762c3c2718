//! [`TypeMarkers`]: every marker of one item (a type, or a version module's mod.rs),
//! read through the vocabulary. Duplicates of single-valued markers and markers in the
//! wrong place are reported here, from the table; what markers mean together is
//! [`crate::validate`]'s business.

use std::collections::BTreeSet;

use proc_macro2::Span;

use super::raw::{attr_markers, doc_markers};
use super::value::{Value, interpret};
use super::vocabulary::{
    DEEPCOPY_GEN, METHOD, Marker, NO_VERBS, ONLY_VERBS, Place, READONLY, SKIP_VERBS,
};
use crate::ctxt::Ctxt;
use crate::model::{DeepCopyGen, Extension, Verb};

/// One recognised marker occurrence.
#[derive(Clone, Debug)]
pub struct Found {
    /// Which marker.
    pub marker: Marker,
    /// Its value.
    pub value: Value,
    /// Where it was written.
    pub span: Span,
    /// How it was spelled (`+groupName` or `group`), for messages.
    pub written: String,
}

/// The markers of one item, in source order (doc comments first, then
/// `#[resource(...)]` keys).
#[derive(Clone, Debug, Default)]
pub struct TypeMarkers {
    found: Vec<Found>,
}

impl TypeMarkers {
    /// Reads the markers of a type; problems go to `cx`.
    pub fn from_attrs(attrs: &[syn::Attribute], cx: &Ctxt) -> Self {
        Self::read(attrs, Place::Type, cx)
    }

    /// Reads the package markers of a version module (its mod.rs's inner doc comments);
    /// type markers there are errors.
    #[cfg(feature = "files")]
    pub fn from_module_attrs(attrs: &[syn::Attribute], cx: &Ctxt) -> Self {
        Self::read(attrs, Place::Package, cx)
    }

    /// Reads the markers of a struct field (its doc comments only); type and package
    /// markers there are errors.
    pub fn from_field_attrs(attrs: &[syn::Attribute], cx: &Ctxt) -> Self {
        let mut found = Vec::new();
        for r in &doc_markers(attrs) {
            let Some((marker, value)) = interpret(r, cx) else {
                continue;
            };
            if !marker.place.allows(Place::Field) {
                cx.error_at(
                    r.span,
                    format!("`{marker}` is not a field marker: put it on the type"),
                );
                continue;
            }
            if marker.kind.once() && found.iter().any(|f: &Found| f.marker == marker) {
                cx.error_at(r.span, format!("duplicate `{}`", r.written()));
                continue;
            }
            found.push(Found {
                marker,
                value,
                span: r.span,
                written: r.written(),
            });
        }
        Self { found }
    }

    /// Every marker read, in source order.
    pub fn iter(&self) -> impl Iterator<Item = &Found> {
        self.found.iter()
    }

    fn read(attrs: &[syn::Attribute], at: Place, cx: &Ctxt) -> Self {
        let mut raw = doc_markers(attrs);
        raw.extend(attr_markers(attrs, cx));
        let mut found: Vec<Found> = Vec::new();
        for r in &raw {
            let Some((marker, value)) = interpret(r, cx) else {
                continue;
            };
            if !marker.place.allows(at) {
                let message = match at {
                    Place::Package if marker.place == Place::Field => {
                        format!("`{marker}` is a field marker: put it on a field or type")
                    }
                    Place::Package => {
                        format!("`{marker}` is a type marker: put it on the type, not in mod.rs")
                    }
                    _ => format!(
                        "`{marker}` is a package marker: put it in the version module's mod.rs (`//! {marker}`)"
                    ),
                };
                cx.error_at(r.span, message);
                continue;
            }
            if marker.kind.once() && found.iter().any(|f| f.marker == marker) {
                cx.error_at(r.span, format!("duplicate `{}`", r.written()));
                continue;
            }
            found.push(Found {
                marker,
                value,
                span: r.span,
                written: r.written(),
            });
        }
        Self { found }
    }

    /// Every occurrence of `marker`, in order.
    pub fn all(&self, marker: Marker) -> impl Iterator<Item = &Found> {
        self.found.iter().filter(move |f| f.marker == marker)
    }

    /// Where `marker` was first written, if it was.
    pub fn span(&self, marker: Marker) -> Option<Span> {
        self.all(marker).next().map(|f| f.span)
    }

    /// The string value of `marker` (its first occurrence).
    pub fn string(&self, marker: Marker) -> Option<String> {
        self.all(marker).find_map(|f| match &f.value {
            Value::Str(s) => Some(s.clone()),
            _ => None,
        })
    }

    /// The boolean value of `marker` (its first occurrence).
    pub fn bool(&self, marker: Marker) -> Option<bool> {
        self.all(marker).find_map(|f| match f.value {
            Value::Bool(b) => Some(b),
            _ => None,
        })
    }

    /// `+k8s:deepcopy-gen` and where it was written.
    pub fn deep_copy(&self) -> Option<(DeepCopyGen, Span)> {
        self.all(DEEPCOPY_GEN).find_map(|f| match f.value {
            Value::DeepCopy(d) => Some((d, f.span)),
            _ => None,
        })
    }

    /// A verb-list marker's verbs, every occurrence merged, with the first span.
    pub fn verb_list(&self, marker: Marker) -> Option<(Vec<Verb>, Span)> {
        let mut out: Option<(Vec<Verb>, Span)> = None;
        for f in self.all(marker) {
            if let Value::Verbs(verbs) = &f.value {
                out.get_or_insert_with(|| (Vec::new(), f.span))
                    .0
                    .extend(verbs.iter().copied());
            }
        }
        out
    }

    /// The `+genclient:method` extensions, in order.
    pub fn methods(&self) -> impl Iterator<Item = &Extension> {
        self.all(METHOD).filter_map(|f| match &f.value {
            Value::Method(ext) => Some(ext),
            _ => None,
        })
    }

    /// The verbs the markers allow (client-gen's `Tags.HasVerb` over noVerbs,
    /// readonly, onlyVerbs and skipVerbs).
    pub fn verbs(&self) -> BTreeSet<Verb> {
        if self.span(NO_VERBS).is_some() {
            return BTreeSet::new();
        }
        let mut only: Option<BTreeSet<Verb>> = None;
        if self.span(READONLY).is_some() {
            only = Some(Verb::READONLY.into_iter().collect());
        }
        if let Some((verbs, _)) = self.verb_list(ONLY_VERBS) {
            only.get_or_insert_with(BTreeSet::new).extend(verbs);
        }
        let mut verbs: BTreeSet<Verb> = only.unwrap_or_else(|| Verb::ALL.into_iter().collect());
        if let Some((skip, _)) = self.verb_list(SKIP_VERBS) {
            for v in skip {
                verbs.remove(&v);
            }
        }
        verbs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::vocabulary::{GENCLIENT, GROUP_NAME, RESOURCE_NAME};

    fn read(item: syn::DeriveInput) -> (TypeMarkers, Vec<String>) {
        let cx = Ctxt::new();
        let m = TypeMarkers::from_attrs(&item.attrs, &cx);
        let errs = match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        };
        (m, errs)
    }

    #[test]
    fn doc_and_attribute_spellings_fold_into_one_marker() {
        let (m, errs) = read(syn::parse_quote! {
            /// +genclient
            /// +genclient:skipVerbs=watch
            #[resource(group = "g.io", plural = "foos", skip_verbs = "patch")]
            struct Foo;
        });
        assert!(errs.is_empty(), "{errs:?}");
        assert!(m.span(GENCLIENT).is_some());
        assert_eq!(m.string(GROUP_NAME).as_deref(), Some("g.io"));
        assert_eq!(m.string(RESOURCE_NAME).as_deref(), Some("foos"));
        assert_eq!(
            m.verb_list(SKIP_VERBS).map(|(v, _)| v),
            Some(vec![Verb::Watch, Verb::Patch])
        );
    }

    #[test]
    fn a_second_single_valued_marker_is_a_duplicate_named_as_written() {
        let (m, errs) = read(syn::parse_quote! {
            /// +groupName=a.io
            /// +groupName=b.io
            #[resource(group = "c.io")]
            struct Foo;
        });
        assert_eq!(errs, ["duplicate `+groupName`", "duplicate `group`"]);
        assert_eq!(m.string(GROUP_NAME).as_deref(), Some("a.io"));
        // Flags may repeat.
        let (_, errs) = read(syn::parse_quote! {
            /// +genclient
            /// +genclient
            struct Foo;
        });
        assert!(errs.is_empty());
    }

    #[test]
    fn markers_in_the_wrong_place_are_errors() {
        let attrs: Vec<syn::Attribute> = vec![
            syn::parse_quote!(#![doc = " +groupName=g.io"]),
            syn::parse_quote!(#![doc = " +genclient:noStatus"]),
            syn::parse_quote!(#![doc = " +kubegen:kind=Foo"]),
        ];
        let cx = Ctxt::new();
        let m = TypeMarkers::from_module_attrs(&attrs, &cx);
        let errs: Vec<String> = cx
            .check()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            errs,
            [
                "`+genclient:noStatus` is a type marker: put it on the type, not in mod.rs",
                "`+kubegen:kind` is a type marker: put it on the type, not in mod.rs",
            ]
        );
        assert_eq!(m.string(GROUP_NAME).as_deref(), Some("g.io"));
    }
}
