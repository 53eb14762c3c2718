//! CRD → types (`kubegen-codegen import-crd`), the other direction of [`crate::crd`]:
//! every served version of each CustomResourceDefinition becomes marked Rust types in the
//! API tree layout `update` reads (`<dir>/<group>/<version>/{mod.rs,types.rs}`), so that
//! `kubegen-codegen update` gives them DeepCopy, `Resource` impls, a clientset, listers
//! and informers, and `kubegen-codegen crd` gives the CRD back.
//!
//! * [`crd_file`]: CRD manifests → the served versions ([`crd_file::CrdVersion`]).
//! * [`names`]: JSON names → Rust identifiers and type names.
//! * [`docs`]: descriptions → warning-free doc comments.
//! * [`constraints`]: schema constraints → controller-gen markers.
//! * [`model`]: the Rust types to write.
//! * [`schema_to_rust`]: structural schemas → [`model`].
//! * [`render`]: [`model`] → Rust source.
//! * [`tree`]: writing (`update`) or checking (`verify`) the output directory.

pub mod constraints;
pub mod crd_file;
pub mod docs;
pub mod model;
pub mod names;
pub mod render;
pub mod schema_to_rust;
pub mod tree;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::render::Boilerplate;
use crd_file::CrdVersion;
use model::Module;
use names::Namer;
use schema_to_rust::Converter;

/// Why an import failed. Every variant names the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A CRD file is neither JSON nor YAML (the message carries the YAML parser's
    /// line and column).
    #[error("{}: {message}", path.display())]
    Yaml {
        /// The CRD file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A document of a CRD file is not a usable CustomResourceDefinition.
    #[error("{}: document {document}: {message}", path.display())]
    Invalid {
        /// The CRD file.
        path: PathBuf,
        /// The document's number in the file, from 1.
        document: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// Two CRDs define the same kind in the same group and version.
    #[error("{}: {message}", path.display())]
    Conflict {
        /// The CRD file read second.
        path: PathBuf,
        /// Which kind and where it was defined first.
        message: String,
    },
    /// The generated source did not parse (a generator bug, reported with the file).
    #[error("{}: generated code does not parse: {message}", path.display())]
    Render {
        /// The file being generated.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// `--output-module` is not a Rust path.
    #[error("--output-module `{0}` is not a Rust module path (e.g. crate::apis)")]
    OutputModule(String),
}

/// What to import and where.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The CRD files (YAML, one or more documents each, or JSON).
    pub crds: Vec<PathBuf>,
    /// The API tree root to write (`<dir>/<group>/<version>/`).
    pub output_dir: PathBuf,
    /// The Rust module path of `output_dir` (`crate::apis`), the `--input-module` of
    /// the `update` run that generates the clients.
    pub output_module: String,
    /// The header of every generated file.
    pub boilerplate: Boilerplate,
}

/// The result of an import: the files (paths relative to the output directory, sorted)
/// and what could not be carried over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// `(relative path, contents)`, sorted by path.
    pub files: Vec<(PathBuf, String)>,
    /// Schema parts no marker carries (`oneOf`, `not` ...), one line each, as
    /// `<crd> <version>: <path>: <what>`.
    pub notes: Vec<String>,
}

fn is_module_path(s: &str) -> bool {
    !s.is_empty()
        && s.split("::").all(|seg| {
            seg.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The directory (module) name of each group: its first DNS label without punctuation
/// (`cert-manager.io` → `certmanager`), or, when two groups would share one, the
/// whole group (`a.example.com` → `a_example_com`).
pub fn group_dirs(groups: &[&str]) -> BTreeMap<String, String> {
    let short = |g: &str| -> String {
        let first = g.split('.').next().unwrap_or(g);
        first
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let long = |g: &str| -> String {
        g.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut out = BTreeMap::new();
    for g in groups {
        let s = short(g);
        let shared = groups.iter().any(|o| o != g && short(o) == s);
        let mut name = if shared || s.is_empty() { long(g) } else { s };
        if name.starts_with(|c: char| c.is_ascii_digit()) || names::snake(&name) != name {
            name.insert(0, 'g');
        }
        out.insert((*g).to_owned(), name);
    }
    out
}

/// Reads the CRDs and renders the tree (nothing is written).
pub fn generate(opts: &ImportOptions) -> Result<Imported, ImportError> {
    if !is_module_path(&opts.output_module) {
        return Err(ImportError::OutputModule(opts.output_module.clone()));
    }
    let mut versions: Vec<(PathBuf, CrdVersion)> = Vec::new();
    for path in &opts.crds {
        let text = fs::read_to_string(path).map_err(|source| ImportError::Io {
            path: path.clone(),
            source,
        })?;
        for v in crd_file::parse(path, &text)? {
            if let Some((first, _)) = versions
                .iter()
                .find(|(_, o)| o.group == v.group && o.version == v.version && o.kind == v.kind)
            {
                return Err(ImportError::Conflict {
                    path: path.clone(),
                    message: format!(
                        "{}/{} {} is already defined by {}",
                        v.group,
                        v.version,
                        v.kind,
                        first.display()
                    ),
                });
            }
            versions.push((path.clone(), v));
        }
    }
    // Deterministic whatever the order of the files: by group, version, kind.
    versions.sort_by(|(_, a), (_, b)| {
        (&a.group, &a.version, &a.kind).cmp(&(&b.group, &b.version, &b.kind))
    });
    let groups: Vec<&str> = {
        let mut g: Vec<&str> = versions.iter().map(|(_, v)| v.group.as_str()).collect();
        g.dedup();
        g
    };
    let dirs = group_dirs(&groups);
    let mut modules: BTreeMap<(String, String), Vec<&CrdVersion>> = BTreeMap::new();
    for (_, v) in &versions {
        let dir = dirs.get(&v.group).cloned().unwrap_or_default();
        modules.entry((dir, v.version.clone())).or_default().push(v);
    }
    let mut imported = Imported::default();
    let render_err = |path: PathBuf| {
        move |e: syn::Error| ImportError::Render {
            path,
            message: e.to_string(),
        }
    };
    let mut tree: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for ((dir, version), crds) in &modules {
        let mut namer = Namer::with_reserved(names::RESERVED_TYPE_NAMES);
        let kinds: Vec<String> = crds.iter().map(|v| namer.unique(&v.kind)).collect();
        let mut conv = Converter::new(&mut namer);
        for (v, kind) in crds.iter().zip(&kinds) {
            conv.resource(v, kind);
        }
        let group = crds.first().map(|v| v.group.clone()).unwrap_or_default();
        let module = Module {
            group: group.clone(),
            version: version.clone(),
            crds: crds.iter().map(|v| v.crd_name.clone()).collect(),
            types: std::mem::take(&mut conv.types),
        };
        imported.notes.append(&mut conv.notes);
        let base = Path::new(dir).join(version);
        let types = base.join("types.rs");
        imported.files.push((
            types.clone(),
            render::types_file(&module, &opts.boilerplate).map_err(render_err(types))?,
        ));
        let m = base.join("mod.rs");
        imported.files.push((
            m.clone(),
            render::version_mod(&module, &opts.output_module, &opts.boilerplate)
                .map_err(render_err(m))?,
        ));
        tree.entry(dir.clone())
            .or_insert_with(|| (group, Vec::new()))
            .1
            .push(version.clone());
    }
    for (dir, (group, versions)) in &tree {
        let m = Path::new(dir).join("mod.rs");
        imported.files.push((
            m.clone(),
            render::group_mod(group, versions, &opts.boilerplate).map_err(render_err(m))?,
        ));
    }
    let dirs: Vec<String> = tree.keys().cloned().collect();
    let root = PathBuf::from("mod.rs");
    imported.files.push((
        root.clone(),
        render::root_mod(&dirs, &opts.boilerplate).map_err(render_err(root))?,
    ));
    imported.files.sort();
    Ok(imported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_directories_are_short_unless_they_would_clash() {
        let dirs = group_dirs(&[
            "cert-manager.io",
            "gateway.networking.k8s.io",
            "a.example.com",
            "a.other.org",
            "type.io",
        ]);
        assert_eq!(dirs["cert-manager.io"], "certmanager");
        assert_eq!(dirs["gateway.networking.k8s.io"], "gateway");
        assert_eq!(dirs["a.example.com"], "a_example_com");
        assert_eq!(dirs["a.other.org"], "a_other_org");
        assert_eq!(dirs["type.io"], "gtype");
    }

    #[test]
    fn output_module_must_be_a_path() {
        assert!(is_module_path("crate::apis"));
        assert!(!is_module_path("crate::"));
        assert!(!is_module_path("a-b"));
    }
}
