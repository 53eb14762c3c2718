//! The file-based generator behind the CLI (`update`, `verify`): walk the API tree,
//! lower each version package, emit `zz_generated_deepcopy.rs` (DeepCopy impls) and
//! `zz_generated_resource.rs` (`kube_core::Resource` impls) beside its mod.rs, and the
//! clientset, listers and informers under the output directory.
//!
//! The version module must declare them: `mod zz_generated_deepcopy;` and
//! `mod zz_generated_resource;` (as Go compiles `zz_generated.deepcopy.go` as part of
//! the package). Generated files import the types they implement with
//! `use super::<module>::<Type>;`.
//!
//! This writes into the source tree, so it is for the CLI or a tool such as an `xtask`,
//! whose output is committed and checked by `verify`. A build script must write only
//! below `OUT_DIR`: it uses [`crate::Builder`] instead.
//!
//! ```no_run
//! // xtask / a code-generation tool, not build.rs
//! let config = kubegen_codegen::Config::new("src/apis", "src/client", "crate::client");
//! kubegen_codegen::Generator::new(config)?.update()?;
//! # Ok::<(), kubegen_codegen::Error>(())
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use crate::diagnostic::{Diagnostic, Error};
use crate::expand;
use crate::layout;
use crate::model::{Package, TypeDef};
use crate::output_tree::OutputTree;
use crate::plural::PluralExceptions;
use crate::render::{self, Boilerplate, GENERATED_LINE};
use crate::source::{self, GENERATED_PREFIX, VersionDir};
use crate::verify::VerifyOutcome;
use crate::walk::walk_files;

/// The file with the `DeepCopy` impls of a version package.
pub const DEEPCOPY_FILE: &str = "zz_generated_deepcopy.rs";
/// The file with the `kube_core::Resource` impls of a version package.
pub const RESOURCE_FILE: &str = "zz_generated_resource.rs";

/// Generator options (the CLI's flags).
#[derive(Clone, Debug)]
pub struct Config {
    /// The apis root (`<root>/<group>/<version>/mod.rs`).
    pub input_dir: PathBuf,
    /// Where clientsets, listers and informers go (entirely generated).
    pub output_dir: PathBuf,
    /// The Rust module path at which `output_dir` is mounted (`crate::client`); the
    /// client, lister and informer emitters use it for paths between generated modules.
    pub output_module: String,
    /// The Rust module path of the apis root (`crate::apis`): generated clients name
    /// types as `<input_module>::<group>::<version>::<Type>`, so every version module
    /// must make its types public at its root (`pub use types::*;`).
    pub input_module: String,
    /// License header file.
    pub boilerplate: Option<PathBuf>,
    /// Generate fake clientsets (used by the clientset emitter).
    pub with_fake: bool,
    /// Generate apply configurations (`applyconfiguration/`, client-go's
    /// `--with-applyconfig`).
    pub with_applyconfig: bool,
    /// Puts each API group of the output tree behind a cargo feature of the crate named
    /// here (`--group-features kubegen`): the feature is the group's module name, the apply
    /// configurations are the `applyconfig` feature, and calling an accessor of a group
    /// whose feature is off is a compile error naming the feature. For a library shipping
    /// many groups (kubegen's built-in tree), so its users compile only the groups they use.
    pub group_features: Option<String>,
    /// Kind → plural overrides.
    pub plural_exceptions: PluralExceptions,
}

impl Config {
    /// A configuration with the required options and defaults for the rest.
    pub fn new(
        input_dir: impl Into<PathBuf>,
        output_dir: impl Into<PathBuf>,
        output_module: impl Into<String>,
    ) -> Self {
        Self {
            input_dir: input_dir.into(),
            output_dir: output_dir.into(),
            output_module: output_module.into(),
            input_module: "crate::apis".to_owned(),
            boilerplate: None,
            with_fake: false,
            with_applyconfig: false,
            group_features: None,
            plural_exceptions: PluralExceptions::default(),
        }
    }

    /// Sets the Rust module path of the apis root (default `crate::apis`).
    #[must_use]
    pub fn input_module(mut self, path: impl Into<String>) -> Self {
        self.input_module = path.into();
        self
    }

    /// Sets the boilerplate header file.
    #[must_use]
    pub fn boilerplate(mut self, path: impl Into<PathBuf>) -> Self {
        self.boilerplate = Some(path.into());
        self
    }

    /// Enables fake clientsets.
    #[must_use]
    pub fn with_fake(mut self, on: bool) -> Self {
        self.with_fake = on;
        self
    }

    /// Enables apply configurations.
    #[must_use]
    pub fn with_applyconfig(mut self, on: bool) -> Self {
        self.with_applyconfig = on;
        self
    }

    /// Puts each API group behind a cargo feature of `krate` (see [`Config::group_features`]).
    #[must_use]
    pub fn group_features(mut self, krate: impl Into<String>) -> Self {
        self.group_features = Some(krate.into());
        self
    }

    /// Adds a `Kind:Plural` exception.
    pub fn plural_exception(mut self, spec: &str) -> Result<Self, Error> {
        self.plural_exceptions
            .add_spec(spec)
            .map_err(|e| Error::Config(e.to_string()))?;
        Ok(self)
    }
}

/// Which directory a generated file belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Root {
    /// The API tree (`zz_generated_*.rs` beside the types).
    Input,
    /// The output directory (clientsets, listers, informers).
    Output,
}

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Its root.
    pub root: Root,
    /// Its path relative to the root.
    pub path: PathBuf,
    /// Its full contents.
    pub contents: String,
}

/// The impls generated for one package's types that go into one `zz_generated_*.rs` file.
#[derive(Clone, Debug)]
pub struct PackageImpls<'a> {
    /// The file ([`DEEPCOPY_FILE`] or [`RESOURCE_FILE`]).
    pub file: &'static str,
    /// The types implemented, in package order.
    pub types: Vec<&'a TypeDef>,
    /// The impls.
    pub impls: TokenStream,
}

/// The `DeepCopy` and `kube_core::Resource` impls of a package, by file; files with no
/// impls are left out. The CLI writes them beside the types; `build.rs` mode
/// ([`crate::Builder`]) puts them in its one generated file.
pub fn package_impls(pkg: &Package) -> Vec<PackageImpls<'_>> {
    let mut out = Vec::new();
    let deep_copy: Vec<&TypeDef> = pkg.deep_copy_types().collect();
    if !deep_copy.is_empty() {
        let impls: TokenStream = deep_copy
            .iter()
            .map(|t| expand::deep_copy_impl(t))
            .collect();
        out.push(PackageImpls {
            file: DEEPCOPY_FILE,
            types: deep_copy,
            impls,
        });
    }
    let resources: Vec<&TypeDef> = pkg.resource_impl_types().map(|(t, _)| t).collect();
    if !resources.is_empty() {
        let impls: TokenStream = pkg
            .resource_impl_types()
            .map(|(t, r)| expand::resource_impl(t, r))
            .collect();
        out.push(PackageImpls {
            file: RESOURCE_FILE,
            types: resources,
            impls,
        });
    }
    out
}

/// Runs the generator for a [`Config`].
#[derive(Clone, Debug)]
pub struct Generator {
    config: Config,
    boilerplate: Boilerplate,
}

impl Generator {
    /// Checks the configuration and loads the boilerplate.
    pub fn new(config: Config) -> Result<Self, Error> {
        for (flag, path) in [
            ("--output-module", &config.output_module),
            ("--input-module", &config.input_module),
        ] {
            if syn::parse_str::<syn::Path>(path).is_err() {
                return Err(Error::Config(format!(
                    "{flag} `{path}` is not a Rust module path"
                )));
            }
        }
        if !config.input_dir.is_dir() {
            return Err(Error::Config(format!(
                "--input-dir `{}` is not a directory",
                config.input_dir.display()
            )));
        }
        let boilerplate = match &config.boilerplate {
            Some(path) => Boilerplate::load(path)?,
            None => Boilerplate::default(),
        };
        Ok(Self {
            config,
            boilerplate,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Root directory for `root`.
    pub fn root_dir(&self, root: Root) -> &Path {
        match root {
            Root::Input => &self.config.input_dir,
            Root::Output => &self.config.output_dir,
        }
    }

    /// Reads and lowers every version package of the tree, in path order. Problems in
    /// every package are reported together.
    pub fn packages(&self) -> Result<Vec<(VersionDir, Package)>, Error> {
        let mut packages = Vec::new();
        let mut diagnostics = Vec::new();
        for dir in source::discover(&self.config.input_dir)? {
            match source::load_package(&dir, &self.config.plural_exceptions) {
                Ok(p) => packages.push((dir, p)),
                Err(Error::Invalid(d)) => diagnostics.extend(d),
                Err(other) => return Err(other),
            }
        }
        if diagnostics.is_empty() {
            Ok(packages)
        } else {
            Err(Error::Invalid(diagnostics))
        }
    }

    /// Reads the whole tree and returns every generated file, sorted by root and path.
    /// Problems in every package are reported together.
    pub fn generate(&self) -> Result<Vec<GeneratedFile>, Error> {
        let mut files = Vec::new();
        let mut diagnostics = Vec::new();
        let packages = self.packages()?;
        for (dir, package) in &packages {
            tracing::debug!(package = %dir.relative.display(), types = package.types.len(), "generating");
            match self.package_files(dir, package) {
                Ok(f) => files.extend(f),
                Err(d) => diagnostics.extend(d),
            }
        }
        match self.layout_files(&packages) {
            Ok(f) => files.extend(f),
            Err(d) => diagnostics.extend(d),
        }
        if !diagnostics.is_empty() {
            return Err(Error::Invalid(diagnostics));
        }
        files.sort_by(|a, b| (a.root, &a.path).cmp(&(b.root, &b.path)));
        Ok(files)
    }

    /// The clientset, listers and informers under the output directory.
    fn layout_files(
        &self,
        packages: &[(VersionDir, Package)],
    ) -> Result<Vec<GeneratedFile>, Vec<Diagnostic>> {
        let path_of = |text: &str| syn::parse_str::<syn::Path>(text);
        let (Ok(output_module), Ok(input_module)) = (
            path_of(&self.config.output_module),
            path_of(&self.config.input_module),
        ) else {
            // `Generator::new` checked both.
            return Ok(Vec::new());
        };
        let config = layout::LayoutConfig {
            output_module: &output_module,
            input_module: &input_module,
            with_fake: self.config.with_fake,
            with_applyconfig: self.config.with_applyconfig,
            group_features: self.config.group_features.as_deref(),
        };
        let mut out = Vec::new();
        let mut diagnostics = Vec::new();
        for (path, tokens) in layout::files(packages, &config) {
            match render::render_file(tokens, &self.boilerplate) {
                Ok(contents) => out.push(GeneratedFile {
                    root: Root::Output,
                    path,
                    contents,
                }),
                Err(e) => {
                    diagnostics.extend(Diagnostic::from_syn(&self.config.output_dir.join(&path), e))
                }
            }
        }
        if diagnostics.is_empty() {
            Ok(out)
        } else {
            Err(diagnostics)
        }
    }

    fn package_files(
        &self,
        dir: &VersionDir,
        pkg: &Package,
    ) -> Result<Vec<GeneratedFile>, Vec<Diagnostic>> {
        package_impls(pkg)
            .into_iter()
            .map(|p| self.file(dir, p.file, &p.types, p.impls))
            .collect()
    }

    fn file(
        &self,
        dir: &VersionDir,
        name: &str,
        types: &[&TypeDef],
        impls: TokenStream,
    ) -> Result<GeneratedFile, Vec<Diagnostic>> {
        let imports = types.iter().map(|t| {
            let module = &t.module;
            let ident = &t.ident;
            quote!(use super:: #(#module::)* #ident;)
        });
        let tokens = quote! {
            #(#imports)*
            #impls
        };
        let path = dir.relative.join(name);
        let contents = render::render_file(tokens, &self.boilerplate)
            .map_err(|e| Diagnostic::from_syn(&self.config.input_dir.join(&path), e))?;
        Ok(GeneratedFile {
            root: Root::Input,
            path,
            contents,
        })
    }

    /// Generated files currently on disk: `zz_generated_*.rs` in every version
    /// directory, and every file under the output directory.
    pub fn existing_files(&self) -> Result<Vec<(Root, PathBuf)>, Error> {
        let mut out = Vec::new();
        for dir in source::discover(&self.config.input_dir)? {
            for entry in fs::read_dir(&dir.dir).map_err(|e| Error::io(&dir.dir, e))? {
                let entry = entry.map_err(|e| Error::io(&dir.dir, e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with(GENERATED_PREFIX)
                    && name.ends_with(".rs")
                    && entry.path().is_file()
                {
                    out.push((Root::Input, dir.relative.join(name)));
                }
            }
        }
        if self.config.output_dir.is_dir() {
            for path in walk_files(&self.config.output_dir)? {
                if let Ok(rel) = path.strip_prefix(&self.config.output_dir) {
                    out.push((Root::Output, rel.to_owned()));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// The [`OutputTree`] of `files`: each below its root (the API tree first, then the
    /// output directory), with every generated file now on disk
    /// ([`Generator::existing_files`]) claimed as ours; a stale one is removed only when
    /// it carries the generated line (verify reports it either way).
    pub fn output_tree(&self, files: &[GeneratedFile]) -> Result<OutputTree, Error> {
        let mut tree = OutputTree::new();
        tree.root(&self.config.input_dir)
            .root(&self.config.output_dir)
            .remove_only_marked(GENERATED_LINE);
        for f in files {
            tree.insert(self.root_dir(f.root), &f.path, f.contents.as_bytes());
        }
        for (root, rel) in self.existing_files()? {
            tree.claim(self.root_dir(root), rel);
        }
        Ok(tree)
    }

    /// Writes `files` below `input_root` / `output_root` (removing nothing). A file that
    /// already holds exactly its contents is left alone ([`OutputTree::write`]).
    pub fn write_files(
        files: &[GeneratedFile],
        input_root: &Path,
        output_root: &Path,
    ) -> Result<(), Error> {
        let mut tree = OutputTree::new();
        tree.root(input_root).root(output_root);
        for f in files {
            let root = match f.root {
                Root::Input => input_root,
                Root::Output => output_root,
            };
            tree.insert(root, &f.path, f.contents.as_bytes());
        }
        Ok(tree.write()?)
    }

    /// Regenerates (in memory) and diffs it against the tree ([`Generator::output_tree`],
    /// [`crate::OutputTree::verify`]).
    pub fn verify(&self) -> Result<VerifyOutcome, Error> {
        let files = self.generate()?;
        Ok(self.output_tree(&files)?.verify()?)
    }

    /// Regenerates in place: writes every generated file and removes stale generated
    /// files (a `zz_generated_*.rs` carrying the generated line that is no longer
    /// produced). Returns the files written.
    pub fn update(&self) -> Result<Vec<GeneratedFile>, Error> {
        let files = self.generate()?;
        self.output_tree(&files)?.write()?;
        Ok(files)
    }
}
