//! `build.rs` mode, as prost-build and tonic-build have it: generate everything into
//! `OUT_DIR` at build time, commit nothing generated.
//!
//! [`Builder`] reads the API tree as the CLI does and writes ONE file, by default
//! `$OUT_DIR/kubegen.rs`, that the crate mounts with `include!`:
//!
//! ```text
//! // build.rs
//! fn main() -> Result<(), kubegen_codegen::BuildError> {
//!     kubegen_codegen::Builder::new()
//!         .input_dir("src/apis")            // <group>/<version>/mod.rs below it
//!         .input_module("crate::apis")      // where src/apis is mounted
//!         .output_module("crate::client")   // where the include! below sits
//!         .with_fake(true)
//!         .compile()?;
//!     Ok(())
//! }
//!
//! // src/lib.rs
//! pub mod apis;
//! /// Generated clientset, listers and informers.
//! pub mod client {
//!     include!(concat!(env!("OUT_DIR"), "/kubegen.rs"));
//! }
//! ```
//!
//! The file holds client-go's layout (`clientset`, `listers`, `informers`) as nested
//! inline modules with exactly the items the CLI writes into `--output-dir`, and a
//! private module with the `DeepCopy` and `kube_core::Resource` impls the CLI writes into
//! `zz_generated_*.rs` beside the types. Trait impls attach to a type wherever they are
//! written, so these name the types by their public path,
//! `<input_module>::<group>::<version>::<Type>`: a type needing an impl must be `pub`
//! (or `pub(crate)`) and reachable at its version module's root (`pub use types::*;`),
//! which the generated clients already require. The tree must not also hold committed
//! `zz_generated_*.rs` files (the impls would be there twice).
//!
//! [`Builder::compile`] prints `cargo:rerun-if-changed` for the API directory and every
//! file below it, and reports problems in the tree as `file:line: message`, once per line
//! as `cargo:warning=` (so Cargo shows them) and in the returned [`BuildError`], whose
//! `Debug` form is the same readable text (what `fn main() -> Result<..>` prints).

use std::collections::{BTreeMap, BTreeSet};
use std::env;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use proc_macro2::{Ident, TokenStream};
use quote::quote;
use syn::ext::IdentExt;

use crate::diagnostic::{Diagnostic, Error};
use crate::expand::names;
use crate::generate::{self, Config, Generator, Root};
use crate::layout;
use crate::render::{self, Boilerplate};
use crate::walk::walk_files;

/// The default name of the generated file in `OUT_DIR`.
pub const DEFAULT_FILE_NAME: &str = "kubegen.rs";

/// The private module of the included file holding the `DeepCopy` and `Resource` impls.
const IMPLS_MODULE: &str = "__kubegen_impls";

/// Generates clientset, listers, informers and impls into `OUT_DIR` from a build script.
///
/// A [`Config`] (the options the CLI's `update` takes) plus what only a build script
/// has: where the one file goes and whether Cargo is told when to rerun. The builder
/// methods set fields of the wrapped [`Config`].
#[derive(Clone, Debug)]
pub struct Builder {
    /// The generator's options; its `output_dir` is set from [`Builder::out_dir`] when
    /// generating (it only locates messages: nothing is written there).
    config: Config,
    /// The first malformed [`Builder::plural_exception`], reported by `generate` (the
    /// builder methods cannot fail).
    invalid_plural: Option<String>,
    /// [`Builder::out_dir`]; `None`: Cargo's `OUT_DIR`.
    out_dir: Option<PathBuf>,
    /// [`Builder::file_name`].
    file_name: String,
    /// [`Builder::emit_rerun_if_changed`].
    rerun_if_changed: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// The conventional layout: types under `src/apis` mounted at `crate::apis`, the
    /// generated file included at `crate::client`, no fake clientset.
    pub fn new() -> Self {
        Self {
            config: Config::new("src/apis", PathBuf::new(), "crate::client"),
            invalid_plural: None,
            out_dir: None,
            file_name: DEFAULT_FILE_NAME.to_owned(),
            rerun_if_changed: true,
        }
    }

    /// The wrapped generator options.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The API tree (`<dir>/<group>/<version>/mod.rs`), relative to the package root
    /// (a build script's working directory). Default `src/apis`.
    #[must_use]
    pub fn input_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.input_dir = dir.into();
        self
    }

    /// The Rust module path of the API tree. Default `crate::apis`.
    #[must_use]
    pub fn input_module(mut self, path: impl Into<String>) -> Self {
        self.config = self.config.input_module(path);
        self
    }

    /// The Rust module path of the module whose body is the `include!`. Default
    /// `crate::client`.
    #[must_use]
    pub fn output_module(mut self, path: impl Into<String>) -> Self {
        self.config.output_module = path.into();
        self
    }

    /// Also generate `clientset::versioned::fake` (the crate then depends on
    /// `kubegen-testserver`).
    #[must_use]
    pub fn with_fake(mut self, on: bool) -> Self {
        self.config = self.config.with_fake(on);
        self
    }

    /// Also generates apply configurations (`applyconfiguration` module).
    #[must_use]
    pub fn with_applyconfig(mut self, on: bool) -> Self {
        self.config = self.config.with_applyconfig(on);
        self
    }

    /// A header of `//` lines for the generated file.
    #[must_use]
    pub fn boilerplate(mut self, path: impl Into<PathBuf>) -> Self {
        self.config = self.config.boilerplate(path);
        self
    }

    /// Adds a `Kind:Plural` exception to the pluraliser (checked by `generate`).
    #[must_use]
    pub fn plural_exception(mut self, spec: impl Into<String>) -> Self {
        let spec = spec.into();
        if self.invalid_plural.is_none()
            && let Err(e) = self.config.plural_exceptions.add_spec(&spec)
        {
            self.invalid_plural = Some(e.to_string());
        }
        self
    }

    /// Where to write the file. Default: the `OUT_DIR` Cargo gives build scripts.
    #[must_use]
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The generated file's name in the output directory. Default `kubegen.rs`.
    #[must_use]
    pub fn file_name(mut self, name: impl Into<String>) -> Self {
        self.file_name = name.into();
        self
    }

    /// Whether [`Builder::compile`] prints `cargo:rerun-if-changed` lines. Default on.
    #[must_use]
    pub fn emit_rerun_if_changed(mut self, on: bool) -> Self {
        self.rerun_if_changed = on;
        self
    }

    fn generator(&self) -> Result<Generator, Error> {
        let config = &self.config;
        for (option, path) in [
            ("input_module", &config.input_module),
            ("output_module", &config.output_module),
        ] {
            if syn::parse_str::<syn::Path>(path).is_err() {
                return Err(Error::Config(format!(
                    "{option}(\"{path}\") is not a Rust module path"
                )));
            }
        }
        if !config.input_dir.is_dir() {
            return Err(Error::Config(format!(
                "input_dir(\"{}\") is not a directory",
                config.input_dir.display()
            )));
        }
        if let Some(message) = &self.invalid_plural {
            return Err(Error::Config(message.clone()));
        }
        // The output directory only locates messages: nothing is written there.
        let mut config = config.clone();
        config.output_dir = self.out_dir.clone().unwrap_or_default();
        Generator::new(config)
    }

    /// The contents of the generated file (reads the tree, writes nothing).
    pub fn generate(&self) -> Result<String, Error> {
        let generator = self.generator()?;
        let committed: Vec<Diagnostic> = generator
            .existing_files()?
            .into_iter()
            .filter(|(root, _)| *root == Root::Input)
            .map(|(_, rel)| Diagnostic {
                path: self.config.input_dir.join(rel),
                line: 0,
                message: "generated file in the API tree: build.rs mode generates these impls into OUT_DIR; delete it and its `mod` line (or generate with the kubegen-codegen CLI instead)".to_owned(),
            })
            .collect();
        if !committed.is_empty() {
            return Err(Error::Invalid(committed));
        }
        let packages = generator.packages()?;
        let path_of = |text: &str| syn::parse_str::<syn::Path>(text);
        let (Ok(output_module), Ok(input_module)) = (
            path_of(&self.config.output_module),
            path_of(&self.config.input_module),
        ) else {
            // `generator` checked both.
            return Err(Error::Config("invalid module path".to_owned()));
        };
        let layout_config = layout::LayoutConfig {
            output_module: &output_module,
            input_module: &input_module,
            with_fake: self.config.with_fake,
            with_applyconfig: self.config.with_applyconfig,
            group_features: self.config.group_features.as_deref(),
        };
        let shown = self
            .out_dir
            .clone()
            .unwrap_or_default()
            .join(&self.file_name);
        let at_output = |e: syn::Error| Error::Invalid(Diagnostic::from_syn(&shown, e));
        let mut items = inline_tree(layout::files(&packages, &layout_config)).map_err(at_output)?;

        let mut impl_modules = Vec::new();
        for (dir, package) in &packages {
            let impls = generate::package_impls(package);
            if impls.is_empty() {
                continue;
            }
            let Some(group) = dir.relative.components().next() else {
                continue;
            };
            let group = names::ident(&names::snake(&group.as_os_str().to_string_lossy()));
            let version = names::ident(&dir.version);
            let mut imported = BTreeSet::new();
            let imports: Vec<TokenStream> = impls
                .iter()
                .flat_map(|p| p.types.iter())
                .filter(|t| imported.insert(t.ident.to_string()))
                .map(|t| {
                    let ident = &t.ident;
                    quote!(use #input_module::#group::#version::#ident;)
                })
                .collect();
            let bodies = impls.into_iter().map(|p| p.impls);
            impl_modules.push((
                group,
                quote! {
                    mod #version {
                        #(#imports)*
                        #(#bodies)*
                    }
                },
            ));
        }
        if !impl_modules.is_empty() {
            let mut by_group: BTreeMap<String, (Ident, Vec<TokenStream>)> = BTreeMap::new();
            for (group, module) in impl_modules {
                by_group
                    .entry(group.to_string())
                    .or_insert_with(|| (group, Vec::new()))
                    .1
                    .push(module);
            }
            let groups = by_group
                .into_values()
                .map(|(group, versions)| quote!(mod #group { #(#versions)* }));
            let module = names::ident(IMPLS_MODULE);
            let doc = " `DeepCopy` and `kube_core::Resource` impls of the API types (the CLI's `zz_generated_*.rs`).";
            let impls: syn::File = syn::parse2(quote! {
                #[doc = #doc]
                mod #module { #(#groups)* }
            })
            .map_err(at_output)?;
            items.extend(impls.items);
        }
        let boilerplate = match &self.config.boilerplate {
            Some(path) => Boilerplate::load(path)?,
            None => Boilerplate::default(),
        };
        render::render_file(quote!(#(#items)*), &boilerplate).map_err(at_output)
    }

    /// Generates into `OUT_DIR` (or [`Builder::out_dir`]) and prints Cargo's
    /// directives on stdout. Returns the path written.
    pub fn compile(self) -> Result<PathBuf, BuildError> {
        self.compile_to(&mut io::stdout().lock())
    }

    /// [`Builder::compile`], printing Cargo's directives to `cargo` instead of stdout.
    pub fn compile_to(self, cargo: &mut impl Write) -> Result<PathBuf, BuildError> {
        let directives = |e: io::Error| BuildError::new(Error::io("<cargo directives>", e));
        if self.rerun_if_changed {
            // Printed first and on failure too, so that fixing a file reruns the script.
            let mut watched = vec![self.config.input_dir.clone()];
            if self.config.input_dir.is_dir() {
                watched.extend(walk_files(&self.config.input_dir).map_err(BuildError::new)?);
            }
            watched.extend(self.config.boilerplate.iter().cloned());
            for path in watched {
                writeln!(cargo, "cargo:rerun-if-changed={}", path.display()).map_err(directives)?;
            }
        }
        let result = self.out_path().and_then(|path| {
            let text = self.generate()?;
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            // Unchanged output keeps its timestamp, so nothing including it rebuilds.
            if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
            }
            Ok(path)
        });
        match result {
            Ok(path) => Ok(path),
            Err(err) => {
                let err = BuildError::new(err);
                for line in err.lines() {
                    writeln!(cargo, "cargo:warning={line}").map_err(directives)?;
                }
                Err(err)
            }
        }
    }

    fn out_path(&self) -> Result<PathBuf, Error> {
        let dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                Error::Config(
                    "OUT_DIR is not set: Builder::compile runs in a build script (or set Builder::out_dir)"
                        .to_owned(),
                )
            })?,
        };
        Ok(dir.join(&self.file_name))
    }
}

/// Turns client-go's file tree (`mod.rs` declaring `pub mod clientset;` ...) into one
/// list of items with every `mod x;` replaced by an inline `mod x { ... }` holding
/// `x.rs` or `x/mod.rs`. The root file's inner attributes are dropped: `include!`
/// cannot take them (the including module carries the docs).
fn inline_tree(files: Vec<layout::LayoutFile>) -> Result<Vec<syn::Item>, syn::Error> {
    let mut parsed: BTreeMap<PathBuf, syn::File> = BTreeMap::new();
    for (path, tokens) in files {
        parsed.insert(path, syn::parse2(tokens)?);
    }
    let Some(root) = parsed.remove(Path::new("mod.rs")) else {
        return Ok(Vec::new());
    };
    let items = inline_items(&mut parsed, Path::new(""), root.items)?;
    if let Some(path) = parsed.keys().next() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            format!(
                "generated file {} is not declared by any module",
                path.display()
            ),
        ));
    }
    Ok(items)
}

fn inline_items(
    files: &mut BTreeMap<PathBuf, syn::File>,
    dir: &Path,
    items: Vec<syn::Item>,
) -> Result<Vec<syn::Item>, syn::Error> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let syn::Item::Mod(mut module) = item else {
            out.push(item);
            continue;
        };
        if module.content.is_some() {
            out.push(syn::Item::Mod(module));
            continue;
        }
        let name = module.ident.unraw().to_string();
        let child_dir = dir.join(&name);
        let file = files
            .remove(&dir.join(format!("{name}.rs")))
            .or_else(|| files.remove(&child_dir.join("mod.rs")))
            .ok_or_else(|| {
                syn::Error::new(
                    module.ident.span(),
                    format!("no generated file for `mod {name};` in {}", dir.display()),
                )
            })?;
        // The file's inner attributes (`//!` docs) become outer ones after the
        // declaration's own: one style per item (clippy's `mixed_attributes_style`).
        module.attrs.extend(file.attrs.into_iter().map(|mut attr| {
            attr.style = syn::AttrStyle::Outer;
            attr
        }));
        let inner = inline_items(files, &child_dir, file.items)?;
        module.content = Some((syn::token::Brace::default(), inner));
        module.semi = None;
        out.push(syn::Item::Mod(module));
    }
    Ok(out)
}

/// Why a build script could not generate: `Display` and `Debug` both give the problems
/// as `file:line: message` lines, so `fn main() -> Result<(), BuildError>` (or
/// `Box<dyn Error>`) fails the build with a readable message.
pub struct BuildError {
    error: Error,
}

impl BuildError {
    fn new(error: Error) -> Self {
        Self { error }
    }

    /// The underlying error.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The problems found in the API tree, one per file and line.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.error.diagnostics()
    }

    /// One line per problem (`file:line: message`), or the error itself.
    fn lines(&self) -> Vec<String> {
        let diagnostics = self.diagnostics();
        if diagnostics.is_empty() {
            vec![self.error.to_string().replace('\n', " ")]
        } else {
            diagnostics
                .iter()
                .map(|d| d.to_string().replace('\n', " "))
                .collect()
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = self.lines();
        match self.diagnostics().len() {
            0 => write!(f, "kubegen-codegen: ")?,
            1 => writeln!(f, "kubegen-codegen: 1 problem in the API tree:")?,
            n => writeln!(f, "kubegen-codegen: {n} problems in the API tree:")?,
        }
        write!(f, "{}", lines.join("\n"))
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<Error> for BuildError {
    fn from(error: Error) -> Self {
        Self::new(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mod_declarations_become_inline_modules_with_the_files_docs_as_outer_docs() {
        let files = vec![
            (
                PathBuf::from("mod.rs"),
                quote! {
                    //! dropped
                    /// Outer doc.
                    pub mod a;
                },
            ),
            (
                PathBuf::from("a/mod.rs"),
                quote! {
                    //! Inner doc.
                    mod b;
                    pub use b::B;
                },
            ),
            (
                PathBuf::from("a/b.rs"),
                quote!(
                    pub struct B;
                ),
            ),
        ];
        let items = inline_tree(files).expect("inline");
        let text = quote!(#(#items)*).to_string();
        assert_eq!(
            text,
            quote! {
                /// Outer doc.
                /// Inner doc.
                pub mod a {
                    mod b { pub struct B; }
                    pub use b::B;
                }
            }
            .to_string()
        );
    }

    #[test]
    fn an_undeclared_or_missing_file_is_an_error() {
        let missing = vec![(
            PathBuf::from("mod.rs"),
            quote!(
                pub mod gone;
            ),
        )];
        assert!(inline_tree(missing).is_err());
        let stray = vec![
            (PathBuf::from("mod.rs"), quote!()),
            (PathBuf::from("x.rs"), quote!()),
        ];
        assert!(inline_tree(stray).is_err());
    }

    #[test]
    fn build_errors_print_one_problem_per_line() {
        let err = BuildError::new(Error::Invalid(vec![
            Diagnostic {
                path: "src/apis/a/v1/mod.rs".into(),
                line: 3,
                message: "first".into(),
            },
            Diagnostic {
                path: "src/apis/a/v1/types.rs".into(),
                line: 9,
                message: "second".into(),
            },
        ]));
        assert_eq!(
            format!("{err:?}"),
            "kubegen-codegen: 2 problems in the API tree:\nsrc/apis/a/v1/mod.rs:3: first\nsrc/apis/a/v1/types.rs:9: second"
        );
        let err = BuildError::new(Error::Config("bad".into()));
        assert_eq!(
            err.to_string(),
            "kubegen-codegen: invalid configuration: bad"
        );
    }

    #[test]
    fn without_out_dir_compile_says_where_it_must_run() {
        // Cargo sets OUT_DIR for build scripts (and for compiling crates that have one);
        // this crate has none, so its tests run without it.
        let mut directives = Vec::new();
        let err = Builder::new()
            .input_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
            .emit_rerun_if_changed(false)
            .compile_to(&mut directives)
            .unwrap_err();
        assert!(err.to_string().contains("OUT_DIR is not set"), "{err}");
        let printed = String::from_utf8(directives).expect("utf-8");
        assert!(printed.starts_with("cargo:warning=invalid configuration: OUT_DIR is not set"));
    }
}
