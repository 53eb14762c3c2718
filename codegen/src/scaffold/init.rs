//! `kubegen-codegen init`: a new operator project with one kind.
//!
//! Everything is first written and generated in a temporary directory; then every path
//! is checked against the target directory, and only when none exists is anything
//! copied there (an existing directory is fine: a `.git` beside it is left alone).

use std::fs;
use std::path::PathBuf;

use super::generated;
use super::layout::{self, Project};
use super::templates::Vars;
use super::{ApiKind, Dependencies, ProjectName, ScaffoldError};

/// What to scaffold, and where.
#[derive(Clone, Debug)]
pub struct InitOptions {
    /// The project directory (created when missing).
    pub dir: PathBuf,
    /// The project's name (`my-operator`).
    pub name: String,
    /// The first kind's group (`example.com`).
    pub group: String,
    /// The first kind's version (`v1alpha1`).
    pub version: String,
    /// The first kind (`Widget`).
    pub kind: String,
    /// Where kubegen comes from.
    pub dependencies: Dependencies,
}

/// Scaffolds the project; returns the files written (relative to `options.dir`).
pub fn init(options: &InitOptions) -> Result<Vec<PathBuf>, ScaffoldError> {
    let project = ProjectName::new(&options.name)?;
    let kind = ApiKind::new(&options.group, &options.version, &options.kind)?;
    let vars = Vars::project(&project, &options.dependencies, &kind);
    let mut files = layout::project_files(&vars);
    files.extend(layout::kind_files(&project, &kind));
    let mut index = Project::default();
    index.add(&kind);
    files.extend(index.index_files());

    let staging = tempfile::tempdir().map_err(|e| ScaffoldError::io(std::env::temp_dir(), e))?;
    layout::write_files(staging.path(), &files)?;
    generated::update(staging.path())?;
    let all = layout::relative_files(staging.path())?;

    let existing: Vec<PathBuf> = all
        .iter()
        .map(|rel| options.dir.join(rel))
        .filter(|p| layout::occupied(p))
        .collect();
    if !existing.is_empty() {
        return Err(ScaffoldError::WouldOverwrite(existing));
    }
    for rel in &all {
        let (from, to) = (staging.path().join(rel), options.dir.join(rel));
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| ScaffoldError::io(parent, e))?;
        }
        // Copies the permissions too: the hack/ scripts stay executable.
        fs::copy(&from, &to).map_err(|e| ScaffoldError::io(&to, e))?;
    }
    tracing::info!(dir = %options.dir.display(), files = all.len(), "scaffolded");
    Ok(all)
}
