//! Writing an import into its output directory (`update`) or comparing it with what is
//! there (`verify`: stale, missing and extra files as a unified diff). The files of
//! `kubegen-codegen update` beside the types (`zz_generated_*.rs`) are not the import's
//! and are left alone; any other generated `.rs` file the import no longer produces is
//! stale (removed by `update`, reported by `verify`).

use std::fs;
use std::path::{Path, PathBuf};

use super::{ImportError, ImportOptions, Imported, generate};
use crate::output_tree::{OutputError, OutputTree};
use crate::render::GENERATED_LINE;
use crate::verify::VerifyOutcome;
use crate::walk::walk_files;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ImportError + '_ {
    move |source| ImportError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The generated `.rs` files under `dir` that the import owns (not `zz_generated_*`).
fn existing(dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let files = walk_files(dir).map_err(|e| ImportError::Io {
        path: dir.to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let mut out = Vec::new();
    for path in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.ends_with(".rs") || name.starts_with("zz_generated") {
            continue;
        }
        let text = fs::read_to_string(&path).map_err(io(&path))?;
        if text.contains(GENERATED_LINE)
            && let Ok(rel) = path.strip_prefix(dir)
        {
            out.push(rel.to_owned());
        }
    }
    Ok(out)
}

/// The [`OutputTree`] of an import: its files below the output directory, and the
/// generated `.rs` files already there that it owns (every file carrying the generated
/// line but `zz_generated_*`) claimed, so one the import no longer produces is stale.
pub fn output_tree(opts: &ImportOptions, imported: &Imported) -> Result<OutputTree, ImportError> {
    let dir = &opts.output_dir;
    let mut tree = OutputTree::new();
    tree.root(dir);
    for stale in existing(dir)? {
        tree.claim(dir, stale);
    }
    for (rel, text) in &imported.files {
        tree.insert(dir, rel, text.as_bytes());
    }
    Ok(tree)
}

/// Imports and writes the tree (files whose contents did not change are not touched),
/// removing generated files the import no longer produces.
pub fn update(opts: &ImportOptions) -> Result<Imported, ImportError> {
    let imported = generate(opts)?;
    output_tree(opts, &imported)?.write()?;
    Ok(imported)
}

/// Imports and compares with the output directory.
pub fn verify(opts: &ImportOptions) -> Result<(VerifyOutcome, Imported), ImportError> {
    let imported = generate(opts)?;
    let outcome = output_tree(opts, &imported)?.verify()?;
    Ok((outcome, imported))
}

impl From<OutputError> for ImportError {
    fn from(e: OutputError) -> Self {
        match e {
            OutputError::Io { path, source } => ImportError::Io { path, source },
        }
    }
}
