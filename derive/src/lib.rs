//! `#[derive(kubegen::Resource)]` and `#[derive(kubegen::deepcopy::DeepCopy)]`.
//!
//! A thin shell around the `kubegen-codegen` library: the input is parsed into
//! [`syn::DeriveInput`] and handed to the same model, validation and emitters the
//! `kubegen-codegen` CLI uses, so the derive and the CLI cannot drift apart. Invalid
//! input produces every error at once, spanned at the offending marker, plus stub impls
//! so the errors are not buried under follow-on "trait not implemented" errors.
//!
//! Keys, as `#[resource(...)]` arguments or as client-go markers in doc comments:
//! `group` (`+groupName=`), `version`, `kind`, `plural` (`+resourceName=`), `namespaced`
//! / `nonNamespaced` (`+genclient:nonNamespaced`), `noStatus`, `noVerbs`, `readonly`,
//! `onlyVerbs = "get,list"`, `skipVerbs = "watch"`,
//! `method = "Scale,verb=get,subresource=scale,result=Scale"`, `deepcopy = false`
//! (`+k8s:deepcopy-gen=false`) and `resource_impl = false` (the type implements
//! `kube_core::Resource` itself). Snake-case spellings (`no_status`) are accepted too.

use proc_macro::TokenStream;
use syn::parse_macro_input;

/// Implements `kube_core::Resource` and `kubegen::deepcopy::DeepCopy` for a resource
/// struct (one with a `metadata: ObjectMeta` field).
///
/// Scope defaults to namespaced, as in client-gen; the plural defaults to
/// code-generator's pluralisation of the kind.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::DeriveInput);
    kubegen_codegen::expand_derive_resource(&input).into()
}

/// Implements `kubegen::crd::Schema` (the type's structural CRD schema) and, for a type
/// with `#[resource(group = ..., version = ...)]`, an inherent `crd()` returning its
/// `CustomResourceDefinition`, from the same generator as `kubegen-codegen crd`. Every
/// type a field names must implement `kubegen::crd::Schema` too, or be a std, serde_json
/// or k8s-openapi type.
#[proc_macro_derive(Schema, attributes(resource))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::DeriveInput);
    kubegen_codegen::expand_derive_schema(&input).into()
}

/// Implements `kubegen::deepcopy::DeepCopy` field by field for a struct or enum.
#[proc_macro_derive(DeepCopy, attributes(resource))]
pub fn derive_deep_copy(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::DeriveInput);
    kubegen_codegen::expand_derive_deep_copy(&input).into()
}

/// Generates the type's apply configuration for typed server-side apply
/// (`FooApplyConfiguration`: every field optional, `with_*` builders, serialized with only
/// what was set) and `impl kubegen::applyconfig::HasApplyConfiguration`; for a resource
/// (`#[resource(...)]`) also `FooApplyConfiguration::new(name[, namespace])`, the
/// `kubegen::applyconfig::ApplyConfiguration` impl typed clients' `apply` takes, and
/// `extract_foo` (client-go's `ExtractFoo`). Derive it on every struct the resource
/// contains, too; an enum or tuple struct is applied whole.
#[proc_macro_derive(ApplyConfiguration, attributes(resource))]
pub fn derive_apply_configuration(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::DeriveInput);
    kubegen_codegen::expand_derive_apply_configuration(&input).into()
}

/// A projection: the part of a kind a controller reads (`#[projection(of = Pod)]`, a
/// `metadata: ObjectMeta` field, and fields with `#[projection(path = "spec.nodeName")]`),
/// decoded straight from list and watch bodies without building the whole object. Emits
/// `kube_core::Resource` (the source kind's names and scope), `kubegen::projection::Projection`,
/// `Deserialize` and `Serialize`; a path naming a field the kind lacks is a compile error
/// at the path.
#[proc_macro_derive(Projection, attributes(projection))]
pub fn derive_projection(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::DeriveInput);
    kubegen_codegen::projection::expand_derive_projection(&input).into()
}
