//! `kubegen-codegen create-api`: another kind in a project `init` made.
//!
//! Adds the kind's own files (types, controller, walk-through with its test; refused when any
//! exists), rewrites the index modules (refused when one lost its
//! [`super::layout::INDEX_MARKER`], i.e. was edited by hand), then
//! regenerates what spans kinds: the clientset, listers and informers, the CRDs and the
//! RBAC role. The generators first run over a copy of the project's `src/` with the
//! change applied, so types they refuse leave the project untouched.

use std::fs;
use std::path::{Path, PathBuf};

use super::generated;
use super::layout::{self, BOILERPLATE_FILE, File, Project};
use super::{ApiKind, ProjectName, ScaffoldError};

/// The kind to add, and the project.
#[derive(Clone, Debug)]
pub struct CreateApiOptions {
    /// The project directory.
    pub dir: PathBuf,
    /// The group (`example.com`).
    pub group: String,
    /// The version (`v1alpha1`).
    pub version: String,
    /// The kind (`Gadget`).
    pub kind: String,
}

/// Adds the kind; returns the files written or rewritten (relative to `options.dir`;
/// regenerated files not included).
pub fn create_api(options: &CreateApiOptions) -> Result<Vec<PathBuf>, ScaffoldError> {
    let dir = &options.dir;
    let kind = ApiKind::new(&options.group, &options.version, &options.kind)?;
    let project_name = package_name(dir)?;
    let mut project = Project::discover(dir)?;
    if project
        .kinds
        .iter()
        .any(|k| k.group == kind.group && k.version == kind.version && k.kind == kind.kind)
    {
        return Err(ScaffoldError::KindExists {
            group: kind.group,
            version: kind.version,
            kind: kind.kind,
        });
    }
    let new_files = layout::kind_files(&project_name, &kind);
    project.add(&kind);
    let index_files = project.index_files();

    layout::refuse_overwrites(dir, &new_files, &index_files)?;

    let changed: Vec<File> = new_files.into_iter().chain(index_files).collect();
    rehearse(dir, &changed)?;
    layout::write_files(dir, &changed)?;
    generated::update(dir)?;
    tracing::info!(dir = %dir.display(), kind = %kind.kind, "added kind");
    Ok(changed.into_iter().map(|f| f.path).collect())
}

/// Runs the generators over a copy of `src/` and the boilerplate with `changed` applied.
pub(crate) fn rehearse(dir: &Path, changed: &[File]) -> Result<(), ScaffoldError> {
    let staging = tempfile::tempdir().map_err(|e| ScaffoldError::io(std::env::temp_dir(), e))?;
    let src = dir.join("src");
    let mut copies: Vec<PathBuf> = layout::relative_files(&src)?
        .into_iter()
        .map(|rel| Path::new("src").join(rel))
        .collect();
    copies.push(PathBuf::from(BOILERPLATE_FILE));
    for rel in copies {
        let to = staging.path().join(&rel);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| ScaffoldError::io(parent, e))?;
        }
        fs::copy(dir.join(&rel), &to).map_err(|e| ScaffoldError::io(dir.join(&rel), e))?;
    }
    layout::write_files(staging.path(), changed)?;
    generated::update(staging.path())
}

/// The project's package name, from its `Cargo.toml`'s `[package]` table.
pub(crate) fn package_name(dir: &Path) -> Result<ProjectName, ScaffoldError> {
    for missing in ["Cargo.toml", "src/apis/mod.rs", "hack/boilerplate.txt"] {
        if !dir.join(missing).is_file() {
            return Err(ScaffoldError::NotAProject {
                dir: dir.to_owned(),
                missing,
            });
        }
    }
    let manifest = dir.join("Cargo.toml");
    let text = fs::read_to_string(&manifest).map_err(|e| ScaffoldError::io(&manifest, e))?;
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            let name = line
                .strip_prefix("name")
                .map(str::trim_start)
                .and_then(|l| l.strip_prefix('='))
                .map(|v| v.trim().trim_matches('"'));
            if let Some(name) = name {
                return ProjectName::new(name);
            }
        }
    }
    Err(ScaffoldError::NotAProject {
        dir: dir.to_owned(),
        missing: "[package] name in Cargo.toml",
    })
}
