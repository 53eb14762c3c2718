//! Lowering `syn` items into the [`model`](crate::model): markers are folded per item,
//! validated ([`crate::validate`]), and resolved against the package (group, version,
//! package-wide deepcopy) into a [`TypeDef`].

use crate::ctxt::Ctxt;
use crate::markers::vocabulary::{
    GENCLIENT, GROUP_GO_NAME, GROUP_NAME, INHERIT, KIND, NO_STATUS, NON_NAMESPACED, RESOURCE_IMPL,
    RESOURCE_NAME, VERSION,
};
use crate::markers::{self, TypeMarkers};
use crate::model::{Body, DeepCopyGen, Derived, ResourceDef, Scope, TypeDef};
use crate::plural::PluralExceptions;
use crate::validate;

/// Which entry point is lowering: it changes defaults, not rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `#[derive(kubegen::Resource)]`: the type is a resource (`+genclient` implied) and is
    /// deep-copied unless `+k8s:deepcopy-gen=false`.
    DeriveResource,
    /// `#[derive(kubegen::deepcopy::DeepCopy)]`: only the `DeepCopy` impl.
    DeriveDeepCopy,
    /// The CLI over an API tree: `+genclient` opts in, deepcopy follows the package.
    Cli,
}

/// What the surrounding package contributes to a type.
#[derive(Clone, Debug)]
pub struct PackageContext<'a> {
    /// The entry point.
    pub mode: Mode,
    /// `+groupName` of the package, if any.
    pub group: Option<String>,
    /// The package's version (directory name), if any.
    pub version: Option<String>,
    /// Package-level `+k8s:deepcopy-gen`.
    pub deep_copy: Option<DeepCopyGen>,
    /// Package-level `+groupGoName`.
    pub group_go_name: Option<String>,
    /// Pluralisation exceptions.
    pub plural_exceptions: &'a PluralExceptions,
}

/// Which impls the item's `#[derive(...)]` provides: `Resource` (kubegen's, not
/// kube's, which comes with `#[resource(inherit = ...)]`) brings `Resource` and, unless
/// `+k8s:deepcopy-gen=false`, `DeepCopy`; `DeepCopy` brings `DeepCopy`.
pub fn derived_impls(attrs: &[syn::Attribute], deep_copy_off: bool) -> Derived {
    let inherit = markers::has_inherit(attrs);
    let mut derived = Derived::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(last) = meta.path.segments.last() {
                if last.ident == "Resource" && !inherit {
                    derived.resource = true;
                    derived.deep_copy |= !deep_copy_off;
                }
                derived.deep_copy |= last.ident == "DeepCopy";
                derived.apply_configuration |= last.ident == "ApplyConfiguration";
            }
            Ok(())
        });
    }
    derived
}

/// Lowers a struct, enum or union into a [`TypeDef`]; `None` when errors were reported.
pub fn lower_type(
    input: &syn::DeriveInput,
    module: Vec<syn::Ident>,
    ctx: &PackageContext<'_>,
    cx: &Ctxt,
) -> Option<TypeDef> {
    let markers = TypeMarkers::from_attrs(&input.attrs, cx);
    validate::type_markers(&markers, cx);
    let body = match &input.data {
        syn::Data::Struct(s) => Body::Struct(s.fields.clone()),
        syn::Data::Enum(e) => Body::Enum(e.variants.iter().cloned().collect()),
        syn::Data::Union(_) => Body::Union,
    };
    let mut ty = TypeDef {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        generics: input.generics.clone(),
        attrs: input.attrs.clone(),
        body,
        module,
        deep_copy: false,
        derived: Derived::default(),
        resource: None,
    };
    let type_deep_copy = markers.deep_copy().map(|(d, _)| d);
    if ctx.mode == Mode::Cli {
        ty.derived = derived_impls(&input.attrs, type_deep_copy == Some(DeepCopyGen::False));
    }
    ty.deep_copy = match ctx.mode {
        Mode::DeriveResource => type_deep_copy != Some(DeepCopyGen::False),
        Mode::DeriveDeepCopy => true,
        Mode::Cli => match type_deep_copy {
            Some(d) => d == DeepCopyGen::True,
            None => ctx.deep_copy == Some(DeepCopyGen::Package),
        },
    };
    if ty.deep_copy && matches!(ty.body, Body::Union) {
        let span = markers
            .deep_copy()
            .map_or_else(|| input.ident.span(), |(_, s)| s);
        if ctx.mode == Mode::Cli && type_deep_copy.is_none() {
            // Package-wide deepcopy skips unions, which cannot be copied field-wise.
            ty.deep_copy = false;
        } else {
            cx.error_at(span, "DeepCopy cannot be generated for a union");
        }
    }
    let is_resource = match ctx.mode {
        Mode::DeriveResource => true,
        Mode::DeriveDeepCopy => false,
        Mode::Cli => markers.span(GENCLIENT).is_some(),
    };
    if is_resource {
        validate::resource_shape(input, &markers, cx);
        ty.resource = resolve_resource(&ty, &markers, ctx, cx);
    }
    (!cx.has_errors()).then_some(ty)
}

/// Lowers a type alias (`pub type Pod = k8s_openapi::api::core::v1::Pod;`): only
/// `+genclient` aliases matter; their `Resource` and `DeepCopy` impls live with the
/// aliased type.
///
/// An alias shows no fields, so it is taken to have a status subresource unless it says
/// `+genclient:noStatus` (client-gen's rule is "a `Status` field and no `noStatus`"; for
/// an alias the marker is the only evidence).
pub fn lower_alias(
    item: &syn::ItemType,
    module: Vec<syn::Ident>,
    ctx: &PackageContext<'_>,
    cx: &Ctxt,
) -> Option<TypeDef> {
    let markers = TypeMarkers::from_attrs(&item.attrs, cx);
    validate::type_markers(&markers, cx);
    let mut ty = TypeDef {
        ident: item.ident.clone(),
        vis: item.vis.clone(),
        generics: item.generics.clone(),
        attrs: item.attrs.clone(),
        body: Body::Alias(item.ty.clone()),
        module,
        deep_copy: false,
        derived: Derived::default(),
        resource: None,
    };
    if markers.span(GENCLIENT).is_some() {
        ty.resource = resolve_resource(&ty, &markers, ctx, cx).map(|mut r| {
            r.impl_resource = false;
            r.has_status_field = true;
            r
        });
    }
    Some(ty)
}

fn resolve_resource(
    ty: &TypeDef,
    markers: &TypeMarkers,
    ctx: &PackageContext<'_>,
    cx: &Ctxt,
) -> Option<ResourceDef> {
    let span = ty.ident.span();
    let group = markers.string(GROUP_NAME).or_else(|| ctx.group.clone());
    let version = markers.string(VERSION).or_else(|| ctx.version.clone());
    let group = match group {
        Some(g) => g,
        None => {
            let hint = if ctx.mode == Mode::Cli {
                "add `//! +groupName=<group>` to the version module's mod.rs (use an empty value for the core group)"
            } else {
                "add `#[resource(group = \"...\")]` (an empty string for the core group)"
            };
            cx.error_at(span, format!("missing group for `{}`: {hint}", ty.ident));
            return None;
        }
    };
    let Some(version) = version else {
        cx.error_at(
            span,
            format!(
                "missing version for `{}`: add `#[resource(version = \"...\")]`",
                ty.ident
            ),
        );
        return None;
    };
    let kind = markers.string(KIND).unwrap_or_else(|| ty.ident.to_string());
    let plural = markers
        .string(RESOURCE_NAME)
        .unwrap_or_else(|| ctx.plural_exceptions.plural(&kind));
    let resource = ResourceDef {
        group,
        version,
        kind,
        plural,
        scope: if markers.span(NON_NAMESPACED).is_some() {
            Scope::Cluster
        } else {
            Scope::Namespaced
        },
        verbs: markers.verbs(),
        extensions: markers.methods().cloned().collect(),
        has_status_field: ty.has_field("status"),
        no_status: markers.span(NO_STATUS).is_some(),
        impl_resource: markers.bool(RESOURCE_IMPL).unwrap_or(true)
            && markers.span(INHERIT).is_none(),
        group_go_name: markers
            .string(GROUP_GO_NAME)
            .or_else(|| ctx.group_go_name.clone()),
    };
    validate::resource_names(&resource, span, cx);
    Some(resource)
}

/// Lowers the struct, enum, union and type-alias items of a module (and of its inline
/// submodules) into types; `module` is the path below the version module.
///
/// Generated files are children of the version module, so they can name its private
/// items, but an item inside a submodule must be visible outside that submodule. A type
/// needing generated code that the generated files cannot name is an error.
pub fn lower_items(
    items: &[syn::Item],
    module: &[syn::Ident],
    ctx: &PackageContext<'_>,
    cx: &Ctxt,
) -> Vec<TypeDef> {
    lower_module(items, module, true, ctx, cx)
}

fn lower_module(
    items: &[syn::Item],
    module: &[syn::Ident],
    reachable: bool,
    ctx: &PackageContext<'_>,
    cx: &Ctxt,
) -> Vec<TypeDef> {
    let visible = |vis: &syn::Visibility| {
        reachable && (module.is_empty() || !matches!(vis, syn::Visibility::Inherited))
    };
    let mut types = Vec::new();
    for item in items {
        let (ty, vis) = match item {
            syn::Item::Struct(s) => (
                lower_type(&syn::DeriveInput::from(s.clone()), module.to_vec(), ctx, cx),
                &s.vis,
            ),
            syn::Item::Enum(e) => (
                lower_type(&syn::DeriveInput::from(e.clone()), module.to_vec(), ctx, cx),
                &e.vis,
            ),
            syn::Item::Union(u) => (
                lower_type(&syn::DeriveInput::from(u.clone()), module.to_vec(), ctx, cx),
                &u.vis,
            ),
            syn::Item::Type(t) => (lower_alias(t, module.to_vec(), ctx, cx), &t.vis),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    let mut path = module.to_vec();
                    path.push(m.ident.clone());
                    types.extend(lower_module(inner, &path, visible(&m.vis), ctx, cx));
                }
                continue;
            }
            _ => continue,
        };
        if let Some(ty) = ty {
            let needs_impl = (ty.deep_copy && !ty.derived.deep_copy)
                || (ty.resource.as_ref().is_some_and(|r| r.impl_resource) && !ty.derived.resource);
            if needs_impl && !visible(vis) {
                cx.error_at(
                    ty.ident.span(),
                    format!(
                        "`{}` is not visible to the generated zz_generated_*.rs modules: make it (and its module) `pub(super)` or wider, or add `+k8s:deepcopy-gen=false`",
                        ty.ident
                    ),
                );
                continue;
            }
            types.push(ty);
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Verb;

    fn lower(input: syn::DeriveInput, mode: Mode) -> Result<TypeDef, Vec<String>> {
        let exceptions = PluralExceptions::default();
        let ctx = PackageContext {
            mode,
            group: Some("example.com".into()),
            version: Some("v1".into()),
            deep_copy: None,
            group_go_name: None,
            plural_exceptions: &exceptions,
        };
        let cx = Ctxt::new();
        let ty = lower_type(&input, Vec::new(), &ctx, &cx);
        match cx.check() {
            Ok(()) => Ok(ty.unwrap()),
            Err(e) => Err(e.into_iter().map(|e| e.to_string()).collect()),
        }
    }

    fn verbs(docs: &[&str]) -> Vec<Verb> {
        let docs = docs.iter().map(|d| format!(" {d}"));
        let input: syn::DeriveInput = syn::parse_quote! {
            #(#[doc = #docs])*
            struct Foo { metadata: ObjectMeta, status: Option<S> }
        };
        lower(input, Mode::DeriveResource)
            .unwrap()
            .resource
            .unwrap()
            .client_verbs()
    }

    #[test]
    fn verb_markers_compute_the_client_verbs() {
        assert_eq!(verbs(&[]), Verb::ALL);
        assert_eq!(verbs(&["+genclient:noVerbs"]), []);
        assert_eq!(verbs(&["+genclient:readonly"]), Verb::READONLY);
        assert_eq!(
            verbs(&["+genclient:readonly", "+genclient:onlyVerbs=create"]),
            [Verb::Create, Verb::Get, Verb::List, Verb::Watch]
        );
        assert_eq!(
            verbs(&[
                "+genclient:skipVerbs=watch,patch",
                "+genclient:skipVerbs=apply"
            ]),
            [
                Verb::Create,
                Verb::Update,
                Verb::UpdateStatus,
                Verb::Delete,
                Verb::DeleteCollection,
                Verb::Get,
                Verb::List,
                Verb::ApplyStatus
            ]
        );
        assert!(!verbs(&["+genclient:noStatus"]).contains(&Verb::UpdateStatus));
    }

    #[test]
    fn derive_defaults_to_namespaced_and_markers_make_it_cluster_scoped() {
        let input: syn::DeriveInput = syn::parse_quote! { struct Foo { metadata: M } };
        let r = lower(input, Mode::DeriveResource)
            .unwrap()
            .resource
            .unwrap();
        assert_eq!(r.scope, Scope::Namespaced);
        assert_eq!(r.plural, "foos");
        assert!(!r.has_status_field);
        let input: syn::DeriveInput = syn::parse_quote! {
            #[resource(nonNamespaced, kind = "Bar", plural = "barz")]
            struct Foo { metadata: M }
        };
        let r = lower(input, Mode::DeriveResource)
            .unwrap()
            .resource
            .unwrap();
        assert_eq!(
            (r.scope, r.kind.as_str(), r.plural.as_str()),
            (Scope::Cluster, "Bar", "barz")
        );
    }

    #[test]
    fn cli_deep_copy_follows_package_then_type_markers() {
        let exceptions = PluralExceptions::default();
        let run = |pkg: Option<DeepCopyGen>, input: syn::DeriveInput| {
            let ctx = PackageContext {
                mode: Mode::Cli,
                group: None,
                version: Some("v1".into()),
                deep_copy: pkg,
                group_go_name: None,
                plural_exceptions: &exceptions,
            };
            let cx = Ctxt::new();
            let ty = lower_type(&input, Vec::new(), &ctx, &cx).unwrap();
            cx.check().unwrap();
            ty.deep_copy
        };
        let plain: syn::DeriveInput = syn::parse_quote! { struct A; };
        let opt_out: syn::DeriveInput = syn::parse_quote! {
            /// +k8s:deepcopy-gen=false
            struct A;
        };
        let opt_in: syn::DeriveInput = syn::parse_quote! {
            /// +k8s:deepcopy-gen=true
            struct A;
        };
        assert!(run(Some(DeepCopyGen::Package), plain.clone()));
        assert!(!run(Some(DeepCopyGen::Package), opt_out));
        assert!(!run(None, plain.clone()));
        assert!(!run(Some(DeepCopyGen::False), plain));
        assert!(run(None, opt_in));
    }

    #[test]
    fn aliases_have_status_unless_marked_no_status() {
        let exceptions = PluralExceptions::default();
        let ctx = PackageContext {
            mode: Mode::Cli,
            group: Some(String::new()),
            version: Some("v1".into()),
            deep_copy: None,
            group_go_name: None,
            plural_exceptions: &exceptions,
        };
        let lower = |item: syn::ItemType| {
            let cx = Ctxt::new();
            let ty = lower_alias(&item, Vec::new(), &ctx, &cx).unwrap();
            cx.check().unwrap();
            ty.resource.unwrap()
        };
        let pod = lower(syn::parse_quote! {
            /// +genclient
            pub type Pod = k8s_openapi::api::core::v1::Pod;
        });
        assert!(pod.has_verb(Verb::UpdateStatus));
        assert!(!pod.impl_resource);
        assert_eq!((pod.group.as_str(), pod.plural.as_str()), ("", "pods"));
        let cm = lower(syn::parse_quote! {
            /// +genclient
            /// +genclient:noStatus
            pub type ConfigMap = k8s_openapi::api::core::v1::ConfigMap;
        });
        assert!(!cm.has_verb(Verb::UpdateStatus));
        assert!(cm.has_verb(Verb::Update));
    }

    #[test]
    fn cli_records_which_impls_a_types_own_derive_provides() {
        let attrs: syn::DeriveInput = syn::parse_quote! {
            #[derive(Clone, kubegen::Resource)]
            struct A;
        };
        assert_eq!(
            derived_impls(&attrs.attrs, false),
            Derived {
                resource: true,
                deep_copy: true,
                apply_configuration: false,
            }
        );
        assert_eq!(
            derived_impls(&attrs.attrs, true),
            Derived {
                resource: true,
                deep_copy: false,
                apply_configuration: false,
            }
        );
        let kube: syn::DeriveInput = syn::parse_quote! {
            #[derive(Resource)]
            #[resource(inherit = "ConfigMap")]
            struct A;
        };
        assert_eq!(derived_impls(&kube.attrs, false), Derived::default());
        let dc: syn::DeriveInput = syn::parse_quote! {
            #[derive(DeepCopy)]
            struct A;
        };
        assert_eq!(
            derived_impls(&dc.attrs, false),
            Derived {
                resource: false,
                deep_copy: true,
                apply_configuration: false,
            }
        );
        let ac: syn::DeriveInput = syn::parse_quote! {
            #[derive(kubegen::ApplyConfiguration)]
            struct A;
        };
        assert!(derived_impls(&ac.attrs, false).apply_configuration);
    }
}
