//! Reading an API tree: `<apis root>/<group>/<version>/mod.rs` plus the modules it
//! declares (`mod types;` → `types.rs`; inline `mod x { ... }` too), as code-generator
//! reads `pkg/apis/<group>/<version>/`. Package markers come from mod.rs's inner doc
//! comments (`//! +groupName=...`, `//! +k8s:deepcopy-gen=package`).

use std::fs;
use std::path::{Path, PathBuf};

use crate::ctxt::Ctxt;
use crate::diagnostic::{Diagnostic, Error};
use crate::lower::{Mode, PackageContext, lower_items};
use crate::markers::TypeMarkers;
use crate::markers::vocabulary::{DEEPCOPY_GEN, GROUP_GO_NAME, GROUP_NAME};
use crate::model::{DeepCopyGen, Package, SourceUses};
use crate::plural::PluralExceptions;
use crate::validate;

/// The prefix of every file the generator writes into the API tree.
pub const GENERATED_PREFIX: &str = "zz_generated_";

/// One version package on disk.
#[derive(Clone, Debug)]
pub struct VersionDir {
    /// `<apis root>/<group>/<version>`.
    pub dir: PathBuf,
    /// The directory path relative to the apis root (`<group>/<version>`).
    pub relative: PathBuf,
    /// The version: the directory's name.
    pub version: String,
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        entries.push(entry.map_err(|e| Error::io(dir, e))?.path());
    }
    entries.sort();
    Ok(entries)
}

/// Every `<group>/<version>/` directory with a mod.rs below `root`, sorted.
pub fn discover(root: &Path) -> Result<Vec<VersionDir>, Error> {
    let mut out = Vec::new();
    for group in read_dir_sorted(root)? {
        if !group.is_dir() {
            continue;
        }
        for version in read_dir_sorted(&group)? {
            if !version.join("mod.rs").is_file() {
                continue;
            }
            let (Some(g), Some(v)) = (group.file_name(), version.file_name()) else {
                continue;
            };
            out.push(VersionDir {
                relative: Path::new(g).join(v),
                version: v.to_string_lossy().into_owned(),
                dir: version,
            });
        }
    }
    Ok(out)
}

fn parse(path: &Path) -> Result<syn::File, Error> {
    let text = fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    syn::parse_file(&text).map_err(|e| Error::Invalid(Diagnostic::from_syn(path, e)))
}

/// Package markers from mod.rs's inner doc comments; type markers there are errors.
fn package_markers(
    file: &syn::File,
    cx: &Ctxt,
) -> (Option<String>, Option<DeepCopyGen>, Option<String>) {
    let m = TypeMarkers::from_module_attrs(&file.attrs, cx);
    let deep_copy = m.deep_copy();
    if let Some((DeepCopyGen::True, span)) = deep_copy {
        cx.error_at(
            span,
            format!("package-level `{DEEPCOPY_GEN}` takes `package` or `false`"),
        );
    }
    (
        m.string(GROUP_NAME),
        deep_copy.map(|(d, _)| d),
        m.string(GROUP_GO_NAME),
    )
}

/// Reads and lowers one version package. Every problem in every file is reported.
pub fn load_package(dir: &VersionDir, exceptions: &PluralExceptions) -> Result<Package, Error> {
    load_package_files(dir, exceptions).map(|(package, _)| package)
}

/// [`load_package`], with the file each type is defined in (parallel to
/// `package.types`), for reporting later problems as `file:line:`.
pub fn load_package_files(
    dir: &VersionDir,
    exceptions: &PluralExceptions,
) -> Result<(Package, Vec<PathBuf>), Error> {
    let mod_path = dir.dir.join("mod.rs");
    let mod_file = parse(&mod_path)?;
    let mut diagnostics = Vec::new();

    let cx = Ctxt::new();
    let (group, deep_copy, group_go_name) = package_markers(&mod_file, &cx);
    if let Err(e) = cx.check() {
        diagnostics.extend(Diagnostic::from_syn(&mod_path, e));
    }
    let ctx = PackageContext {
        mode: Mode::Cli,
        group: group.clone(),
        version: Some(dir.version.clone()),
        deep_copy,
        group_go_name: group_go_name.clone(),
        plural_exceptions: exceptions,
    };

    let mut files: Vec<(PathBuf, syn::File, Vec<syn::Ident>)> = Vec::new();
    for item in &mod_file.items {
        if let syn::Item::Mod(m) = item {
            let name = m.ident.to_string();
            if m.content.is_some() || name.starts_with(GENERATED_PREFIX) {
                continue;
            }
            let path = dir.dir.join(format!("{name}.rs"));
            if !path.is_file() {
                // `mod x;` backed by `x/mod.rs` is a nested package, not part of this one.
                continue;
            }
            match parse(&path) {
                Ok(file) => files.push((path, file, vec![m.ident.clone()])),
                Err(Error::Invalid(d)) => diagnostics.extend(d),
                Err(other) => return Err(other),
            }
        }
    }

    let mut types = Vec::new();
    let mut uses = Vec::new();
    let sources = std::iter::once((&mod_path, &mod_file, Vec::new()))
        .chain(files.iter().map(|(p, f, m)| (p, f, m.clone())));
    let mut type_files: Vec<PathBuf> = Vec::new();
    for (path, file, module) in sources {
        let cx = Ctxt::new();
        let lowered = lower_items(&file.items, &module, &ctx, &cx);
        uses.push(SourceUses::of(module.clone(), &file.items));
        type_files.extend(lowered.iter().map(|_| path.clone()));
        types.extend(lowered);
        if let Err(e) = cx.check() {
            diagnostics.extend(Diagnostic::from_syn(path, e));
        }
    }
    let package = Package {
        group,
        version: dir.version.clone(),
        deep_copy,
        group_go_name,
        types,
        uses,
    };
    // Package-wide checks, reported against the file defining the offending type.
    for (i, ty) in package.types.iter().enumerate() {
        if let Some(previous) = package.types[..i].iter().find(|t| t.ident == ty.ident) {
            diagnostics.push(Diagnostic {
                path: type_files[i].clone(),
                line: ty.ident.span().start().line,
                message: format!(
                    "duplicate type name `{}` in package `{}` (also defined in module `{}`)",
                    ty.ident,
                    dir.relative.display(),
                    module_name(&previous.module)
                ),
            });
        }
    }
    for (i, message) in validate::package_problems(&package) {
        diagnostics.push(Diagnostic {
            path: type_files[i].clone(),
            line: package.types[i].ident.span().start().line,
            message,
        });
    }
    if diagnostics.is_empty() {
        Ok((package, type_files))
    } else {
        Err(Error::Invalid(diagnostics))
    }
}

fn module_name(module: &[syn::Ident]) -> String {
    if module.is_empty() {
        "mod.rs".to_owned()
    } else {
        module
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("::")
    }
}
