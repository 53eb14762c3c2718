//! The typed model the emitters read: a package (one API group/version), its types, and
//! for each `+genclient` type a [`ResourceDef`] carrying everything the client, lister,
//! informer, `Resource` and `DeepCopy` emitters need (group, version, kind, plural, scope,
//! allowed verbs, extension methods, status presence).
//!
//! The model is built from `syn` by `crate::lower` and checked by `crate::validate`;
//! a model that exists is valid.

use std::collections::BTreeSet;
use std::fmt;

use proc_macro2::Span;

/// A client verb (`+genclient:onlyVerbs=...`, `+genclient:method=...,verb=...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// POST a new object.
    Create,
    /// PUT an object.
    Update,
    /// PUT the `/status` subresource.
    UpdateStatus,
    /// DELETE one object.
    Delete,
    /// DELETE a collection.
    DeleteCollection,
    /// GET one object.
    Get,
    /// GET a list.
    List,
    /// Watch a collection.
    Watch,
    /// PATCH an object.
    Patch,
    /// Server-side apply.
    Apply,
    /// Server-side apply of the `/status` subresource.
    ApplyStatus,
}

impl Verb {
    /// Every verb, in client-gen's order.
    pub const ALL: [Verb; 11] = [
        Verb::Create,
        Verb::Update,
        Verb::UpdateStatus,
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Patch,
        Verb::Apply,
        Verb::ApplyStatus,
    ];

    /// `+genclient:readonly`'s verbs.
    pub const READONLY: [Verb; 3] = [Verb::Get, Verb::List, Verb::Watch];

    /// The marker spelling (`deleteCollection`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::UpdateStatus => "updateStatus",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deleteCollection",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Patch => "patch",
            Verb::Apply => "apply",
            Verb::ApplyStatus => "applyStatus",
        }
    }

    /// Parses the marker spelling.
    pub fn parse(s: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether `+genclient:method` may override this verb's input type.
    pub fn supports_input_override(self) -> bool {
        matches!(self, Verb::Create | Verb::Update | Verb::Apply)
    }

    /// Whether `+genclient:method` may override this verb's result type.
    pub fn supports_result_override(self) -> bool {
        matches!(
            self,
            Verb::Create | Verb::Update | Verb::Get | Verb::List | Verb::Patch | Verb::Apply
        )
    }

    /// Whether `+genclient:method` may use this verb at all.
    pub fn supports_extension(self) -> bool {
        !matches!(
            self,
            Verb::UpdateStatus | Verb::DeleteCollection | Verb::Watch | Verb::Delete
        )
    }

    /// Whether the verb acts on the `/status` subresource.
    pub fn is_status(self) -> bool {
        matches!(self, Verb::UpdateStatus | Verb::ApplyStatus)
    }

    /// The comma-separated list of verbs accepting an input override (for messages).
    pub fn input_override_verbs() -> String {
        join(
            Verb::ALL
                .into_iter()
                .filter(|v| v.supports_input_override()),
        )
    }

    /// The comma-separated list of verbs accepting a result override (for messages).
    pub fn result_override_verbs() -> String {
        join(
            Verb::ALL
                .into_iter()
                .filter(|v| v.supports_result_override()),
        )
    }

    /// The comma-separated list of all verbs (for messages).
    pub fn all_verbs() -> String {
        join(Verb::ALL.into_iter())
    }
}

fn join(verbs: impl Iterator<Item = Verb>) -> String {
    verbs.map(Verb::as_str).collect::<Vec<_>>().join(", ")
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether objects live in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Namespaced (the default, as in client-gen).
    Namespaced,
    /// Cluster-scoped (`+genclient:nonNamespaced`).
    Cluster,
}

/// `+k8s:deepcopy-gen=...` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeepCopyGen {
    /// `=package` (package level only): every type of the package.
    Package,
    /// `=true`: this type even when the package is off.
    True,
    /// `=false`: not this type / not this package.
    False,
}

/// An extension method (`+genclient:method=GetScale,verb=get,subresource=scale,result=Scale`).
#[derive(Clone, Debug)]
pub struct Extension {
    /// The method name as written (`GetScale`); emitters snake-case it.
    pub name: String,
    /// The HTTP verb it uses.
    pub verb: Verb,
    /// The subresource path (`scale`), if any.
    pub subresource: Option<String>,
    /// The input type replacing the resource type (create/update/apply only).
    pub input: Option<syn::Path>,
    /// The result type replacing the resource type.
    pub result: Option<syn::Path>,
    /// Where the marker was written.
    pub span: Span,
}

/// Everything about a `+genclient` type that emitters need.
#[derive(Clone, Debug)]
pub struct ResourceDef {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version (`v1alpha1`).
    pub version: String,
    /// Kind (`Foo`).
    pub kind: String,
    /// REST resource name (`foos`).
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// Verbs the markers allow (before status gating; see [`ResourceDef::has_verb`]).
    pub verbs: BTreeSet<Verb>,
    /// `+genclient:method` extensions, in marker order.
    pub extensions: Vec<Extension>,
    /// Whether the type has a `status` field.
    pub has_status_field: bool,
    /// `+genclient:noStatus`.
    pub no_status: bool,
    /// Whether to emit the `kube_core::Resource` impl (false when the type already has
    /// one: `+kubegen:resourceImpl=false`, kube's `#[resource(inherit = ...)]`, a type
    /// alias of a foreign type).
    pub impl_resource: bool,
    /// `+groupGoName=` override for accessor names.
    pub group_go_name: Option<String>,
}

impl ResourceDef {
    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether the type has a status subresource (`status` field, no `noStatus`).
    pub fn has_status(&self) -> bool {
        self.has_status_field && !self.no_status
    }

    /// Whether the typed client exposes `verb`: allowed by the markers and, for the
    /// status verbs, only with a status subresource.
    pub fn has_verb(&self, verb: Verb) -> bool {
        self.verbs.contains(&verb) && (!verb.is_status() || self.has_status())
    }

    /// The verbs the typed client exposes, in client-gen order.
    pub fn client_verbs(&self) -> Vec<Verb> {
        Verb::ALL
            .into_iter()
            .filter(|v| self.has_verb(*v))
            .collect()
    }

    /// Whether a lister is generated (list + get, as lister-gen requires).
    pub fn has_lister(&self) -> bool {
        self.has_verb(Verb::List) && self.has_verb(Verb::Get)
    }

    /// Whether an informer is generated (list + watch, as informer-gen requires).
    pub fn has_informer(&self) -> bool {
        self.has_verb(Verb::List) && self.has_verb(Verb::Watch)
    }

    /// Whether the resource is namespaced.
    pub fn namespaced(&self) -> bool {
        self.scope == Scope::Namespaced
    }
}

/// The shape of a type's definition.
#[derive(Clone, Debug)]
pub enum Body {
    /// A struct (named, tuple or unit fields).
    Struct(syn::Fields),
    /// An enum.
    Enum(Vec<syn::Variant>),
    /// A union (never deep-copied).
    Union,
    /// A type alias (`pub type Pod = k8s_openapi::...::Pod;`): it can carry `+genclient`
    /// for a client, but its impls live with the aliased type.
    Alias(Box<syn::Type>),
}

/// Impls a type gets from its own `#[derive(...)]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Derived {
    /// `#[derive(kubegen::Resource)]`: the `Resource` impl.
    pub resource: bool,
    /// `#[derive(kubegen::Resource)]` (which also emits `DeepCopy`, unless
    /// `+k8s:deepcopy-gen=false`) or `#[derive(DeepCopy)]`.
    pub deep_copy: bool,
    /// `#[derive(kubegen::ApplyConfiguration)]`: the apply configuration.
    pub apply_configuration: bool,
}

/// One type of a package.
#[derive(Clone, Debug)]
pub struct TypeDef {
    /// The type's name.
    pub ident: syn::Ident,
    /// Its visibility (generated clients, listers and informers get the same).
    pub vis: syn::Visibility,
    /// Its generics (resources must have none).
    pub generics: syn::Generics,
    /// Its attributes (doc comments, `#[serde(...)]`, `#[resource(...)]`), which the CRD
    /// schema reads (descriptions, serde's container attributes, type markers).
    pub attrs: Vec<syn::Attribute>,
    /// Its definition.
    pub body: Body,
    /// Module path below the version module where it is defined (`types` for
    /// `types.rs`; empty for `mod.rs` and for derive input).
    pub module: Vec<syn::Ident>,
    /// Whether to emit a `DeepCopy` impl.
    pub deep_copy: bool,
    /// Which impls the type's own `#[derive(...)]` provides, so the CLI leaves them to
    /// the derive (CLI mode only; always empty for derive input).
    pub derived: Derived,
    /// `Some` for `+genclient` types.
    pub resource: Option<ResourceDef>,
}

impl TypeDef {
    /// Whether the struct has a named field called `name`.
    pub fn has_field(&self, name: &str) -> bool {
        match &self.body {
            Body::Struct(syn::Fields::Named(fields)) => fields
                .named
                .iter()
                .any(|f| f.ident.as_ref().is_some_and(|i| i == name)),
            _ => false,
        }
    }
}

/// The `use` items of one source file of a package and the modules it declares.
#[derive(Clone, Debug, Default)]
pub struct SourceUses {
    /// The file's module below the version module (`[]` for `mod.rs`, `[types]`).
    pub module: Vec<syn::Ident>,
    /// Its `use` items.
    pub items: Vec<syn::ItemUse>,
    /// The modules it declares (`mod types;`): a `use` path may start with one.
    pub mods: Vec<syn::Ident>,
}

impl SourceUses {
    /// The `use` items and module declarations of `items`, a file at `module`.
    pub fn of(module: Vec<syn::Ident>, items: &[syn::Item]) -> Self {
        let mut out = SourceUses {
            module,
            ..Self::default()
        };
        for item in items {
            match item {
                syn::Item::Use(u) => out.items.push(u.clone()),
                syn::Item::Mod(m) => out.mods.push(m.ident.clone()),
                _ => {}
            }
        }
        out
    }
}

/// One API group/version: `<apis root>/<group>/<version>/`.
#[derive(Clone, Debug)]
pub struct Package {
    /// `+groupName=` (None when absent).
    pub group: Option<String>,
    /// The version (the directory name).
    pub version: String,
    /// `+k8s:deepcopy-gen=package|false` from mod.rs (None when absent).
    pub deep_copy: Option<DeepCopyGen>,
    /// `+groupGoName=` from mod.rs.
    pub group_go_name: Option<String>,
    /// The types, in file then source order.
    pub types: Vec<TypeDef>,
    /// The `use` items of each source file, for generated code that names the field
    /// types of its types from elsewhere (apply configurations).
    pub uses: Vec<SourceUses>,
}

impl Package {
    /// Types needing a generated `DeepCopy` impl (those that do not derive it).
    pub fn deep_copy_types(&self) -> impl Iterator<Item = &TypeDef> {
        self.types
            .iter()
            .filter(|t| t.deep_copy && !t.derived.deep_copy)
    }

    /// `+genclient` types with their resource definitions.
    pub fn resources(&self) -> impl Iterator<Item = (&TypeDef, &ResourceDef)> {
        self.types
            .iter()
            .filter_map(|t| t.resource.as_ref().map(|r| (t, r)))
    }

    /// Resources needing a generated `kube_core::Resource` impl.
    pub fn resource_impl_types(&self) -> impl Iterator<Item = (&TypeDef, &ResourceDef)> {
        self.resources()
            .filter(|(t, r)| r.impl_resource && !t.derived.resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(verbs: &[Verb], status: bool, no_status: bool) -> ResourceDef {
        ResourceDef {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Foo".into(),
            plural: "foos".into(),
            scope: Scope::Namespaced,
            verbs: verbs.iter().copied().collect(),
            extensions: Vec::new(),
            has_status_field: status,
            no_status,
            impl_resource: true,
            group_go_name: None,
        }
    }

    #[test]
    fn update_status_needs_a_status_field_and_no_no_status() {
        assert!(resource(&Verb::ALL, true, false).has_verb(Verb::UpdateStatus));
        assert!(!resource(&Verb::ALL, false, false).has_verb(Verb::UpdateStatus));
        assert!(!resource(&Verb::ALL, true, true).has_verb(Verb::ApplyStatus));
        assert!(resource(&Verb::ALL, true, true).has_verb(Verb::Update));
    }

    #[test]
    fn lister_and_informer_gating_follows_lister_and_informer_gen() {
        let r = resource(&[Verb::Get, Verb::List], false, false);
        assert!(r.has_lister());
        assert!(!r.has_informer());
        let r = resource(&[Verb::List, Verb::Watch], false, false);
        assert!(!r.has_lister());
        assert!(r.has_informer());
    }

    #[test]
    fn verbs_round_trip_through_their_marker_spelling() {
        for v in Verb::ALL {
            assert_eq!(Verb::parse(v.as_str()), Some(v));
        }
        assert_eq!(Verb::parse("Get"), None);
    }

    #[test]
    fn core_group_api_version_is_the_bare_version() {
        let mut r = resource(&[], false, false);
        assert_eq!(r.api_version(), "example.com/v1");
        r.group.clear();
        assert_eq!(r.api_version(), "v1");
    }
}
