//! The kubegen code generator: client-go's `+genclient` markers to Rust code.
//!
//! One model, one set of emitters, two entry points:
//!
//! * [`expand_derive_resource`] / [`expand_derive_deep_copy`] take a
//!   [`syn::DeriveInput`] and return tokens; `kubegen-derive` is a thin shell over them.
//! * [`expand_file`] takes a parsed source file plus its package context, and
//!   `Generator` walks an API tree (`<apis root>/<group>/<version>/`) and writes
//!   `zz_generated_deepcopy.rs` and `zz_generated_resource.rs` beside each version module
//!   and client-go's layout under an output directory; the `kubegen-codegen` CLI
//!   (`update`, `verify`) uses it.
//! * `Builder` is the `build.rs` mode (as prost-build's): the same output as one file in
//!   `OUT_DIR` for `include!`, nothing generated committed.
//! * controller-gen's manifests: [`crd`] (CustomResourceDefinitions), [`rbac`] (roles from
//!   `+kubebuilder:rbac`), [`webhook`] (webhook configurations from `+kubebuilder:webhook`,
//!   and a CRD's conversion webhook from `+kubebuilder:webhook:conversion`).
//!
//! Every file-writing generator (`update`, `crd`, `rbac`, `webhook`, `import-crd`) fills
//! one `OutputTree` (the files it wants, the files on disk that are its own) and writes or
//! verifies that.
//!
//! Features: `files` (the tree walker, [`Generator`], `Builder`, `verify`, prettyplease
//! output) and `cli` (the binary) are on by default; a build script needs only `files`
//! (`default-features = false, features = ["files"]`); `kubegen-derive` turns both off,
//! so a crate using the derive compiles only `syn`, `quote` and the model.
//!
//! Pipeline (internal modules): `markers` (doc comments and `#[resource(...)]` → markers)
//! → `lower` (markers + items → [`model`]) with `validate` reporting every problem into a
//! `ctxt::Ctxt` → `expand` (model → tokens) → `render` (prettyplease + header).
//!
//! ```
//! let input: syn::DeriveInput = syn::parse_quote! {
//!     /// +genclient:nonNamespaced
//!     #[resource(group = "example.com", version = "v1")]
//!     pub struct Widget { pub metadata: ObjectMeta }
//! };
//! let tokens = kubegen_codegen::expand_derive_resource(&input).to_string();
//! assert!(tokens.contains("ClusterResourceScope"));
//! assert!(tokens.contains("\"widgets\""));
//! ```

pub mod applyconfig;
#[cfg(feature = "files")]
pub mod builder;
pub mod crd;
pub(crate) mod ctxt;
#[cfg(feature = "files")]
pub mod diagnostic;
pub(crate) mod expand;
mod fallback;
#[doc(hidden)]
pub mod fuzz;
#[cfg(feature = "files")]
mod gates;
#[cfg(feature = "files")]
pub mod generate;
#[cfg(feature = "files")]
pub mod import;
#[cfg(feature = "files")]
pub(crate) mod layout;
pub(crate) mod lower;
pub(crate) mod markers;
pub mod model;
#[cfg(feature = "files")]
pub mod output_tree;
pub mod plural;
pub mod projection;
pub mod rbac;
#[cfg(feature = "files")]
pub(crate) mod render;
pub mod resolve;
#[cfg(feature = "files")]
pub mod scaffold;
#[cfg(feature = "files")]
pub mod source;
pub(crate) mod validate;
#[cfg(feature = "files")]
pub mod verify;
#[cfg(feature = "files")]
pub mod walk;
pub mod webhook;

#[cfg(feature = "files")]
pub use builder::{BuildError, Builder};
#[cfg(feature = "files")]
pub use diagnostic::{Diagnostic, Error};
#[cfg(feature = "files")]
pub use generate::{Config, GeneratedFile, Generator, Root};
#[cfg(feature = "files")]
pub use output_tree::{OutputError, OutputTree};
pub use plural::PluralExceptions;
#[cfg(feature = "files")]
pub use render::Boilerplate;
#[cfg(feature = "files")]
pub use verify::VerifyOutcome;

use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;
use crate::lower::{Mode, PackageContext};
use crate::markers::TypeMarkers;
use crate::markers::vocabulary::RESOURCE_IMPL;
use crate::model::{DeepCopyGen, Package};

fn expand_derive(input: &syn::DeriveInput, mode: Mode) -> TokenStream {
    let exceptions = PluralExceptions::default();
    let ctx = PackageContext {
        mode,
        group: None,
        version: None,
        deep_copy: None,
        group_go_name: None,
        plural_exceptions: &exceptions,
    };
    let cx = Ctxt::new();
    let ty = lower::lower_type(input, Vec::new(), &ctx, &cx);
    match (cx.check(), ty) {
        (Ok(()), Some(ty)) => expand::type_tokens(&ty),
        (Err(err), _) => {
            // A second reading, for the stubs only: its problems are already in `err`.
            let again = Ctxt::new();
            let markers = TypeMarkers::from_attrs(&input.attrs, &again);
            again.discard();
            let deep_copy = mode == Mode::DeriveDeepCopy
                || markers.deep_copy().map(|(d, _)| d) != Some(DeepCopyGen::False);
            let resource =
                mode == Mode::DeriveResource && markers.bool(RESOURCE_IMPL) != Some(false);
            fallback::fallback(input, &err, resource, deep_copy)
        }
        // Lowering returns `None` only after reporting an error.
        (Ok(()), None) => TokenStream::new(),
    }
}

/// `#[derive(kubegen::Resource)]`: the `kube_core::Resource` impl (unless
/// `resource_impl = false`) and the `DeepCopy` impl (unless `deepcopy = false`), or,
/// when the input is invalid, every error plus stub impls.
pub fn expand_derive_resource(input: &syn::DeriveInput) -> TokenStream {
    expand_derive(input, Mode::DeriveResource)
}

/// `#[derive(kubegen::deepcopy::DeepCopy)]`: the field-wise `DeepCopy` impl.
pub fn expand_derive_deep_copy(input: &syn::DeriveInput) -> TokenStream {
    expand_derive(input, Mode::DeriveDeepCopy)
}

/// `#[derive(kubegen::Schema)]`: `impl kubegen::crd::Schema` and, for a type with
/// `#[resource(group = ..., version = ...)]`, `crd()`; or every error, spanned.
pub fn expand_derive_schema(input: &syn::DeriveInput) -> TokenStream {
    expand_derive_with(input, expand::schema_impl)
}

/// A derive that reads one type, resource or not (`#[resource(...)]` decides), and emits
/// `emit`'s tokens, or every error reported while lowering or emitting, spanned.
fn expand_derive_with(
    input: &syn::DeriveInput,
    emit: impl FnOnce(&model::TypeDef, &Ctxt) -> TokenStream,
) -> TokenStream {
    let exceptions = PluralExceptions::default();
    let is_resource = input.attrs.iter().any(|a| a.path().is_ident("resource"));
    let ctx = PackageContext {
        mode: if is_resource {
            Mode::DeriveResource
        } else {
            Mode::DeriveDeepCopy
        },
        group: None,
        version: None,
        deep_copy: None,
        group_go_name: None,
        plural_exceptions: &exceptions,
    };
    let cx = Ctxt::new();
    let tokens = lower::lower_type(input, Vec::new(), &ctx, &cx)
        .map(|ty| emit(&ty, &cx))
        .unwrap_or_default();
    match cx.check() {
        Ok(()) => tokens,
        Err(err) => err.to_compile_error(),
    }
}

/// `#[derive(kubegen::ApplyConfiguration)]`: the type's apply configuration
/// (`FooApplyConfiguration`, every field optional, builder methods) and its
/// `HasApplyConfiguration` impl; for a type with `#[resource(...)]` also the constructor,
/// the `ApplyConfiguration` impl and `extract_foo`. An enum or tuple struct is applied
/// whole. The same tokens `kubegen-codegen update --with-applyconfig` writes.
pub fn expand_derive_apply_configuration(input: &syn::DeriveInput) -> TokenStream {
    expand_derive_with(input, |ty, cx| {
        let tokens = applyconfig::type_tokens(ty, cx);
        if tokens.is_empty() {
            cx.error_spanned_by(
                &input.ident,
                "`ApplyConfiguration` can be derived for a struct or enum without generic \
                 parameters, and not for a list type (one with `ListMeta`): lists are never \
                 applied",
            );
        }
        tokens
    })
}

/// Package context for [`expand_file`]: what the version directory and its mod.rs say.
#[derive(Clone, Debug, Default)]
pub struct FileContext {
    /// `+groupName` (or `None`).
    pub group: Option<String>,
    /// The version (directory name).
    pub version: String,
    /// Package `+k8s:deepcopy-gen`.
    pub deep_copy: Option<DeepCopyGen>,
    /// Plural exceptions.
    pub plural_exceptions: PluralExceptions,
}

/// What [`expand_file`] generates for one file's types.
#[derive(Clone, Debug, Default)]
pub struct FileOutput {
    /// `kube_core::Resource` impls of the `+genclient` types.
    pub resource: TokenStream,
    /// `DeepCopy` impls.
    pub deep_copy: TokenStream,
    /// The typed clients, listers and informers of the `+genclient` types, as the CLI
    /// writes them into `clientset/`, `listers/` and `informers/` (per type: client,
    /// lister, informer).
    pub access: TokenStream,
    /// Apply configurations of every type, as `--with-applyconfig` writes them into
    /// `applyconfiguration/` (there with the types named by their full path).
    pub apply_configuration: TokenStream,
}

/// Generates the impls for the types of one source file (as if it were a version
/// module's `mod.rs` with `ctx` as package context), exactly as the CLI does for that
/// file. Errors are combined into one [`syn::Error`].
pub fn expand_file(file: &syn::File, ctx: &FileContext) -> Result<FileOutput, syn::Error> {
    let cx = Ctxt::new();
    let pctx = PackageContext {
        mode: Mode::Cli,
        group: ctx.group.clone(),
        version: Some(ctx.version.clone()),
        deep_copy: ctx.deep_copy,
        group_go_name: None,
        plural_exceptions: &ctx.plural_exceptions,
    };
    let types = lower::lower_items(&file.items, &[], &pctx, &cx);
    let package = Package {
        group: ctx.group.clone(),
        version: ctx.version.clone(),
        deep_copy: ctx.deep_copy,
        group_go_name: None,
        types,
        uses: vec![model::SourceUses::of(Vec::new(), &file.items)],
    };
    validate::package(&package, &cx);
    cx.check()?;
    let mut out = FileOutput::default();
    for (ty, r) in package.resource_impl_types() {
        out.resource.extend(expand::resource_impl(ty, r));
    }
    for ty in package.deep_copy_types() {
        out.deep_copy.extend(expand::deep_copy_impl(ty));
    }
    for (ty, r) in package.resources() {
        out.access.extend(expand::access_tokens(ty, r));
    }
    // Serde attributes were read (and any problem reported) above.
    let again = Ctxt::new();
    for ty in &package.types {
        out.apply_configuration
            .extend(applyconfig::type_tokens(ty, &again));
    }
    again.discard();
    Ok(out)
}
