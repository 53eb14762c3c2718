//! Writing an import into its output directory (`update`) or comparing it with what is
//! there (`verify`: stale, missing and extra files as a unified diff). The files of
//! `kubegen-codegen update` beside the types (`zz_generated_*.rs`) are not the import's
//! and are left alone; any other generated `.rs` file the import no longer produces is
//! stale (removed by `update`, reported by `verify`).

use std::fs;
use std::path::{Path, PathBuf};

use super::{ImportError, ImportOptions, Imported, generate};
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

/// Imports and writes the tree (files whose contents did not change are not touched),
/// removing generated files the import no longer produces.
pub fn update(opts: &ImportOptions) -> Result<Imported, ImportError> {
    let imported = generate(opts)?;
    for stale in existing(&opts.output_dir)? {
        if !imported.files.iter().any(|(p, _)| *p == stale) {
            let p = opts.output_dir.join(&stale);
            tracing::info!(path = %p.display(), "removing stale imported file");
            fs::remove_file(&p).map_err(io(&p))?;
        }
    }
    for (rel, text) in &imported.files {
        let p = opts.output_dir.join(rel);
        if fs::read_to_string(&p).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).map_err(io(parent))?;
        }
        fs::write(&p, text).map_err(io(&p))?;
    }
    Ok(imported)
}

/// Imports and compares with the output directory.
pub fn verify(opts: &ImportOptions) -> Result<(VerifyOutcome, Imported), ImportError> {
    let imported = generate(opts)?;
    let mut names: Vec<PathBuf> = imported.files.iter().map(|(p, _)| p.clone()).collect();
    names.extend(existing(&opts.output_dir)?);
    names.sort();
    names.dedup();
    let mut outcome = VerifyOutcome::default();
    for rel in names {
        let path = opts.output_dir.join(&rel);
        let old = fs::read_to_string(&path).ok();
        let new = imported
            .files
            .iter()
            .find(|(p, _)| *p == rel)
            .map(|(_, t)| t.clone());
        if old == new {
            continue;
        }
        outcome.record(path, old.as_deref(), new.as_deref());
    }
    Ok((outcome, imported))
}
